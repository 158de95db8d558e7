/* The arm64 side of Scripts/arm64-emulation.sh: "op a b c" lines in, the real instruction's answer out. */
#include <stdio.h>
#include <stdlib.h>
void rampart_arm64_instruction(long op, const unsigned char *a, const unsigned char *b, const unsigned char *c, unsigned char *out);
void $ss17_assertionFailure__4file4line5flagss5NeverOs12StaticStringV_A2HSus6UInt32VtF(void) { abort(); }
void $ss18_fatalErrorMessage__4file4line5flagss5NeverOs12StaticStringV_A2HSus6UInt32VtF(void) { abort(); }
static void unhex(const char *s, unsigned char *o) { for (int i = 0; i < 16; i++) { unsigned v; sscanf(s + 2 * i, "%2x", &v); o[i] = (unsigned char)v; } }
int main(void) {
    char line[256], a[40], b[40], c[40]; long op;
    unsigned char x[16], y[16], z[16], r[16];
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "%ld %39s %39s %39s", &op, a, b, c) != 4) continue;
        unhex(a, x); unhex(b, y); unhex(c, z);
        rampart_arm64_instruction(op, x, y, z, r);
        for (int i = 0; i < 16; i++) printf("%02x", r[i]);
        printf("\n");
    }
    return 0;
}
