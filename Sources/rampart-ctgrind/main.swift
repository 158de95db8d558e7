// Placeholder: the ctgrind cases land in the next commits.
import RampartTestSupportC
print(rampart_ct_running_on_valgrind())
