/* Reads cases from stdin, one per line: "op keyhex ivhex statehex inputhex" (a "-" for an empty
 * field), runs each through the arm64 kernels (shims.swift) and prints "outputhex ivhex statehex".
 * For Scripts/arm64-kernels.sh, under qemu-aarch64; not part of any product. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long rampart_arm64_case(long op, const unsigned char *key, long keyLength, unsigned char *iv,
                        const unsigned char *input, unsigned char *output, long blocks,
                        unsigned char *state, unsigned char *schedule);

/* The two standard-library trap entry points the kernels reference (overflow and bounds checks). */
void $ss17_assertionFailure__4file4line5flagss5NeverOs12StaticStringV_A2HSus6UInt32VtF(void) { abort(); }
void $ss18_fatalErrorMessage__4file4line5flagss5NeverOs12StaticStringV_A2HSus6UInt32VtF(void) { abort(); }

static long unhex(const char *s, unsigned char *out, long max) {
    if (strcmp(s, "-") == 0) return 0;
    long n = (long)strlen(s) / 2;
    if (n > max) { fprintf(stderr, "field too long\n"); exit(2); }
    for (long i = 0; i < n; i++) { unsigned v; sscanf(s + 2 * i, "%2x", &v); out[i] = (unsigned char)v; }
    return n;
}

static void hex(const unsigned char *p, long n) {
    if (n == 0) { printf("-"); return; }
    for (long i = 0; i < n; i++) printf("%02x", p[i]);
}

int main(void) {
    enum { MAX = 1 << 16 };
    static char line[8 * MAX];
    static unsigned char key[640] __attribute__((aligned(16))), iv[32], state[64] __attribute__((aligned(16))), input[MAX], output[MAX];
    static unsigned char schedule[1024] __attribute__((aligned(16)));
    char f1[16], f2[1296], f3[80], f4[144];
    while (fgets(line, sizeof line, stdin)) {
        static char f5[2 * MAX + 2];
        if (sscanf(line, "%15s %1295s %79s %143s %131073s", f1, f2, f3, f4, f5) != 5) continue;
        long op = atol(f1);
        long keyLength = unhex(f2, key, sizeof key);
        long ivLength = unhex(f3, iv, sizeof iv);
        memset(state, 0, sizeof state);
        unhex(f4, state, sizeof state);
        long n = unhex(f5, input, MAX);
        memset(output, 0xEE, sizeof output);
        long r = rampart_arm64_case(op, key, keyLength, iv, input, op == 7 ? output : output, n / 16, state, schedule);
        if (r == 0) { printf("error\n"); continue; }
        hex(output, op == 7 || (op >= 10 && op <= 12) ? 0 : n); printf(" "); hex(iv, ivLength); printf(" "); hex(state, op == 10 || op == 13 ? 32 : op == 11 ? 20 : op == 12 ? 64 : 16); printf("\n");
    }
    return 0;
}
