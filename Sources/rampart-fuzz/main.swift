// Placeholder: the fuzz targets land in the next commits.
import RampartTestSupportC
print(rampart_fuzz_available() != 0 ? "libFuzzer linked" : "libFuzzer not linked")
