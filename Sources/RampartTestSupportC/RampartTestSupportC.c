// Valgrind client requests, written from the documented request ABI (valgrind.h: a "special
// instruction" preamble of rotations that is a no-op on real hardware, then a marker instruction;
// the request block's address goes in rax/x4, the result comes back in rdx/x3). Only x86_64 and
// arm64 Linux are implemented; elsewhere every request returns its default (no effect).
#include "RampartTestSupportC.h"

#define RAMPART_VG_RUNNING_ON_VALGRIND 0x1001UL
#define RAMPART_VG_COUNT_ERRORS 0x1201UL
// VG_USERREQ_TOOL_BASE('M','C') and the next two memcheck requests.
#define RAMPART_MC_BASE ((((unsigned long)'M') << 24) | (((unsigned long)'C') << 16))
#define RAMPART_MC_MAKE_MEM_UNDEFINED (RAMPART_MC_BASE + 1)
#define RAMPART_MC_MAKE_MEM_DEFINED (RAMPART_MC_BASE + 2)

static unsigned long rampart_vg_request(unsigned long fallback, unsigned long request,
                                        unsigned long a1, unsigned long a2) {
    volatile unsigned long args[6] = {request, a1, a2, 0, 0, 0};
    volatile unsigned long result = fallback;
#if defined(__x86_64__) && defined(__linux__)
    unsigned long r;
    __asm__ volatile("rolq $3,  %%rdi ; rolq $13, %%rdi\n\t"
                     "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
                     "xchgq %%rbx,%%rbx"
                     : "=d"(r)
                     : "a"(&args[0]), "0"(fallback)
                     : "cc", "memory");
    result = r;
#elif defined(__aarch64__) && defined(__linux__)
    unsigned long r;
    __asm__ volatile("mov x3, %1\n\t"
                     "mov x4, %2\n\t"
                     "ror x12, x12, #3  ;  ror x12, x12, #13\n\t"
                     "ror x12, x12, #51 ;  ror x12, x12, #61\n\t"
                     "orr x10, x10, x10\n\t"
                     "mov %0, x3"
                     : "=r"(r)
                     : "r"(fallback), "r"(&args[0])
                     : "cc", "memory", "x3", "x4");
    result = r;
#else
    (void)args;
#endif
    return result;
}

void rampart_ct_secret(const void *p, size_t len) {
    rampart_vg_request(0, RAMPART_MC_MAKE_MEM_UNDEFINED, (unsigned long)p, (unsigned long)len);
}

void rampart_ct_public(const void *p, size_t len) {
    rampart_vg_request(0, RAMPART_MC_MAKE_MEM_DEFINED, (unsigned long)p, (unsigned long)len);
}

unsigned long rampart_ct_running_on_valgrind(void) {
    return rampart_vg_request(0, RAMPART_VG_RUNNING_ON_VALGRIND, 0, 0);
}

unsigned long rampart_ct_error_count(void) {
    return rampart_vg_request(0, RAMPART_VG_COUNT_ERRORS, 0, 0);
}

// Weak: resolved only when libFuzzer (-sanitize=fuzzer) is linked.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size))
    __attribute__((weak));

int rampart_fuzz_run_driver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size)) {
    if (!LLVMFuzzerRunDriver) return -1;
    return LLVMFuzzerRunDriver(argc, argv, callback);
}

int rampart_fuzz_available(void) { return LLVMFuzzerRunDriver != 0; }
