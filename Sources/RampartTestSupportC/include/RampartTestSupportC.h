// Test-only C for Rampart's tools: valgrind client requests for the ctgrind method and the weak
// declaration of libFuzzer's driver. No library product depends on this target.
#ifndef RAMPART_TEST_SUPPORT_C_H
#define RAMPART_TEST_SUPPORT_C_H

#include <stddef.h>
#include <stdint.h>

/// Marks `len` bytes at `p` as undefined for memcheck (a secret): any branch or address computed
/// from them is reported. No effect outside valgrind.
void rampart_ct_secret(const void *p, size_t len);

/// Marks `len` bytes at `p` as defined again (declassified: public from here on).
void rampart_ct_public(const void *p, size_t len);

/// Nonzero when running under valgrind.
unsigned long rampart_ct_running_on_valgrind(void);

/// The number of errors valgrind has reported so far (0 outside valgrind).
unsigned long rampart_ct_error_count(void);

/// libFuzzer's entry point for programs with their own main; NULL unless the program was linked
/// with -sanitize=fuzzer.
int rampart_fuzz_run_driver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// Whether libFuzzer is linked into this program.
int rampart_fuzz_available(void);

#endif
