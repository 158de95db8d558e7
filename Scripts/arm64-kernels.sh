#!/usr/bin/env bash
# The arm64 kernels as arm64 machine code, checked and run, on an x86_64 machine: the standard
# library's module is built for aarch64 from its textual interface (the two x86-only Float80 shim calls
# replaced), RampartBarrier, RampartKernelSupport and RampartAccelARMv8 are compiled to arm64 object
# files with the kernels' target features, their object code is checked (the cryptography instructions
# present in every entry point; conditional branches counted against the reviewed numbers below: the
# kernels branch on block counts only, never on data), and every entry point runs under qemu-aarch64
# through thin @_cdecl shims (Scripts/arm64/shims.swift, driver.c) against the published vectors and an
# independent AES and GHASH (Scripts/arm64/check.py). The kernels call nothing in the Swift runtime:
# every symbol the objects leave undefined is stubbed to abort, so a runtime call fails the run.
#
#   Scripts/arm64-kernels.sh          (needs gcc-aarch64-linux-gnu, binutils-aarch64-linux-gnu,
#                                      qemu-user-static; about a minute, the first run longer)
#
# What this cannot show: timings (qemu is no model of an Apple core), and the parts of the library
# that need the Swift runtime (the registry, the public API), which run only on real arm64 hardware.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${RAMPART_ARM64_WORK:-.build/arm64}
mkdir -p "$work/mods/Swift.swiftmodule"
for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-objdump aarch64-linux-gnu-nm qemu-aarch64-static; do
    command -v "$tool" > /dev/null || { echo "arm64-kernels: $tool not found (apt-get install gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static)" >&2; exit 1; }
done
swiftc=$(command -v swiftc)
root=$(cd "$(dirname "$(readlink -f "$swiftc")")/.." && pwd)
target=aarch64-unknown-linux-gnu

# 1. The standard library's module for aarch64 (rebuilt when the toolchain changes).
stdlib="$work/mods/Swift.swiftmodule/$target.swiftmodule"
version=$("$swiftc" --version 2>&1 | head -1)
if [ ! -f "$stdlib" ] || [ "$(cat "$work/stdlib.version" 2>/dev/null)" != "$version" ]; then
    iface="$root/lib/swift/linux/Swift.swiftmodule/x86_64-unknown-linux-gnu.swiftinterface"
    sed "s/-target x86_64-unknown-linux-gnu/-target $target/;
         s/self = _stdlib_remainderl(self, other)/_ = self/; s/self = _stdlib_squareRootl(self)/_ = self/" \
        "$iface" > "$work/Swift.aarch64.swiftinterface"
    "$swiftc" -frontend -compile-module-from-interface -target "$target" -module-name Swift -parse-stdlib \
        "$work/Swift.aarch64.swiftinterface" -o "$stdlib"
    echo "$version" > "$work/stdlib.version"
fi

# 2. The kernel modules, whole-module, optimized, with each one's features (Package.swift's kernelFlags).
compile() {
    local name=$1 features=$2; shift 2
    local flags=()
    for f in $features; do flags+=(-Xcc -Xclang -Xcc -target-feature -Xcc -Xclang -Xcc "$f"); done
    "$swiftc" -frontend -c -target "$target" -parse-stdlib -parse-as-library -O -I "$work/mods" -I "$work" \
        -resource-dir "$root/lib/swift" -module-name "$name" -emit-module-path "$work/$name.swiftmodule" \
        ${flags[@]+"${flags[@]}"} "$@" -o "$work/$name.o"
}
compile RampartBarrier "" Sources/RampartBarrier/*.swift
compile RampartKernelSupport "" Sources/RampartKernelSupport/*.swift
compile RampartAccelARMv8 "+aes" Sources/RampartAccelARMv8/*.swift
compile RampartAccelARMv8SHA "+sha2" Sources/RampartAccelARMv8SHA/*.swift
compile RampartAccelARMv8SHA512 "+sha2 +sha3" Sources/RampartAccelARMv8SHA512/*.swift
compile RampartAccelARMv8AESSHA "+aes +sha2" Sources/RampartAccelARMv8AESSHA/*.swift
compile RampartARM64Shims "+aes +sha2 +sha3" Scripts/arm64/shims.swift
echo "arm64 object files: $(cd "$work" && ls RampartBarrier.o RampartKernelSupport.o RampartAccelARMv8*.o | tr '\n' ' ')"

# 3. Object code. For each entry point: the instructions it must contain, and the reviewed number of
# conditional branches (b.cond, cbz/cbnz, tbz/tbnz), every one on a public count (blocks, rounds, the
# four-block loops, the CTR counter's carry out of its low word).
dis="$work/kernels.dis"
aarch64-linux-gnu-objdump -d --no-show-raw-insn "$work/RampartAccelARMv8.o" "$work/RampartAccelARMv8SHA.o" \
    "$work/RampartAccelARMv8SHA512.o" "$work/RampartAccelARMv8AESSHA.o" > "$dis"
fail=0
# Reviewed 2026-12-07 (Swift 6.3.1): besides the loops over blocks and rounds, the branches are the
# optimizer's overflow traps (b.vs after a subtraction, b.cc after the check that 16·i fits: lsr #60)
# and, in armExpandKey, the schedule's word positions (i mod nk); the CTR carry compiles to csinc.
# armGCMEncrypt also tests `pending` (tbz), public: false only before its first eight-block group;
# armIGEDecryptSHA256 tests `rounds == 14` (the stitched loop for AES-256) and the block counts.
checks=(
    "12armExpandKey:aese aesimc:17"
    "13armEncryptECB:aese aesmc:20"
    "13armDecryptECB:aesd aesimc:20"
    "6armCTR:aese aesmc:19"
    "13armCBCEncrypt:aese:10"
    "13armCBCDecrypt:aesd:20"
    "13armIGEEncrypt:aese:10"
    "13armIGEDecrypt:aesd:10"
    "18armGHASHPrecompute::1"
    "14armGHASHBlocks:pmull pmull2:7"
    "13armGCMEncrypt:aese pmull pmull2:30"
    "13armGCMDecrypt:aese pmull pmull2:20"
    "15armSHA256Blocks:sha256h sha256h2 sha256su0 sha256su1 rev32:2"
    "13armSHA1Blocks:sha1c sha1p sha1m sha1h sha1su0 sha1su1 rev32:2"
    "RampartAccelARMv8SHA51203armD6Blocks:sha512h sha512h2 sha512su0 sha512su1 rev64:3"
    "19armIGEDecryptSHA256:aesd aesimc sha256h sha256h2 sha256su0 sha256su1:38"
)
for c in "${checks[@]}"; do
    IFS=: read -r sym need reviewed <<< "$c"
    body=$(awk -v f="$sym" 'index($0, f) && /^[0-9a-f]+ </ {on=1; next} on && /^$/ {exit} on' "$dis")
    if [ -z "$body" ]; then echo "arm64-kernels: $sym not found in the object code" >&2; fail=1; continue; fi
    for insn in $need; do
        if ! echo "$body" | grep -qE $'\t'"$insn"$'[ \t]'; then echo "arm64-kernels: $sym has no $insn" >&2; fail=1; fi
    done
    n=$(echo "$body" | grep -cE $'\t(b\\.[a-z]+|cbn?z|tbn?z)[ \t]' || true)
    crypto=$(echo "$body" | grep -cE $'\t(aese|aesd|aesmc|aesimc|pmull2?|sha1[a-z0-9]+|sha256[a-z0-9]+|sha512[a-z0-9]+)[ \t]' || true)
    echo "  $sym: $crypto cryptography instructions, $n conditional branches (reviewed: $reviewed)"
    if [ "$n" -gt "$reviewed" ]; then echo "arm64-kernels: $sym has $n conditional branches, $reviewed reviewed: a new branch to review" >&2; fail=1; fi
done
# The shared portable code of RampartKernelSupport as arm64 runs it (issue 37 item 6, the part that
# compiles without the Swift runtime): Poly1305's block on umulh, Argon2's compression on NEON.
ks="$work/RampartKernelSupport.dis"  # `portable` reads $ks
aarch64-linux-gnu-objdump -d --no-show-raw-insn "$work/RampartKernelSupport.o" > "$ks"
portable() {
    local sym=$1 pattern=$2 what=$3
    local n
    n=$(awk -v f="$sym" 'index($0, f) && /^[0-9a-f]+ </ {on=1; next} on && /^$/ {on=0} on' "$ks" | grep -cE "$pattern" || true)
    echo "  $sym: $n $what"
    if [ "$n" -eq 0 ]; then echo "arm64-kernels: $sym has no $what on arm64" >&2; fail=1; fi
}
portable 13poly1305Block $'\tumulh[ \t]' "umulh (64x64->128 products)"
portable 14argon2Compress 'v[0-9]+\.2d' "NEON instructions on 2x64-bit lanes"

# The whole library (the Rampart module) as arm64 object code, for the portable code arm64 runs where
# no kernel exists: Glibc's Swift overlay (and _Builtin_float, which it imports) built for aarch64
# from their textual interfaces against Debian's aarch64 glibc headers (the cross compiler's), then
# RampartEncoding and Rampart compiled whole-module, optimized. Not run (no Swift runtime for aarch64
# here); checked: ChaCha20's and Salsa20's portable loops on NEON 4x32-bit lanes, BLAKE2b's on 2x64-bit
# lanes, the X25519 ladder (radix 2^51) and the portable Montgomery multiplication on umulh.
for m in _Builtin_float Glibc; do
    mod="$work/mods/$m.swiftmodule/$target.swiftmodule"
    [ -f "$mod" ] && [ "$(cat "$work/stdlib.version")" = "$version" ] && [ "$mod" -nt "$work/stdlib.version" ] && continue
    mkdir -p "$work/mods/$m.swiftmodule" "$work/glibc"
    # The overlay's module map names headers relative to the toolchain's sysroot: make them absolute.
    sed -E 's#(header) "([^"S][^"]*)"#\1 "/usr/aarch64-linux-gnu/include/\2"#' "$root/lib/swift/linux/x86_64/glibc.modulemap" > "$work/glibc/module.modulemap"
    cp "$root/lib/swift/linux/x86_64/SwiftGlibc.h" "$work/glibc/"
    sed "s/-target x86_64-unknown-linux-gnu/-target $target/" "$root/lib/swift/linux/$m.swiftmodule/x86_64-unknown-linux-gnu.swiftinterface" > "$work/$m.aarch64.swiftinterface"
    "$swiftc" -frontend -compile-module-from-interface -target "$target" -module-name "$m" -I "$work/mods" -I "$work/glibc" \
        -resource-dir "$root/lib/swift" -Xcc -isystem -Xcc /usr/aarch64-linux-gnu/include "$work/$m.aarch64.swiftinterface" -o "$mod"
done
library=(-target "$target" -parse-as-library -O -I "$work/mods" -I "$work" -I "$work/glibc" -resource-dir "$root/lib/swift"
         -disable-implicit-concurrency-module-import -disable-implicit-string-processing-module-import -package-name rampart
         -Xcc -isystem -Xcc /usr/aarch64-linux-gnu/include)
"$swiftc" -frontend -c "${library[@]}" -module-name RampartEncoding -emit-module-path "$work/RampartEncoding.swiftmodule" \
    Sources/RampartEncoding/*.swift -o "$work/RampartEncoding.o"
"$swiftc" -frontend -c "${library[@]}" -module-name Rampart -emit-module-path "$work/Rampart.swiftmodule" \
    $(find Sources/Rampart -name '*.swift' | sort) -o "$work/Rampart.o"
ks="$work/Rampart.dis"
aarch64-linux-gnu-objdump -d --no-show-raw-insn "$work/Rampart.o" > "$ks"
echo "  the Rampart module compiles to arm64 code ($(grep -c '' "$ks") lines of disassembly)"
portable 19chacha20XORPortable 'v[0-9]+\.4s' "NEON instructions on 4x32-bit lanes"
portable 18salsa20XORPortable 'v[0-9]+\.4s' "NEON instructions on 4x32-bit lanes"
portable 21blake2bBlocksPortable 'v[0-9]+\.2d' "NEON instructions on 2x64-bit lanes"
portable 12x25519Ladder $'\tumulh[ \t]' "umulh (64x64->128 products)"
portable 10MontgomeryO11mulPortable $'\tumulh[ \t]' "umulh (64x64->128 products)"

# Calls: only the two trap entry points, and in the registry conformances (not run here) the
# feature-set constants, the round-constant table and the kernels' own entry points (objdump without
# relocations shows a call to another function of the same section as a call to the caller itself).
calls=$(awk '/\tbl\t/ {print $NF}' "$dis" | sort -u |
    grep -vE '^<\$s[0-9]+RampartAccelARMv8|_assertionFailure|_fatalErrorMessage|FeaturesV(6armAES|8armPMULL|7armSHA2|9armSHA512)ACvau|sha(256|512)RoundConstantsSays6UInt(32|64)VGvau|armImplementation(Name|Requires)' || true)
if [ -n "$calls" ]; then echo "arm64-kernels: the kernels call into the runtime or the library: $calls" >&2; fail=1; fi

# 4. Link with the C driver (undefined symbols stubbed to abort: type metadata and protocol
# descriptors of the registry's conformances, never touched by the entry points) and run.
objs=("$work/RampartARM64Shims.o" "$work/RampartAccelARMv8.o" "$work/RampartAccelARMv8SHA.o" "$work/RampartAccelARMv8SHA512.o"
      "$work/RampartAccelARMv8AESSHA.o" "$work/RampartKernelSupport.o" "$work/RampartBarrier.o")
defined=$(for o in "${objs[@]}"; do aarch64-linux-gnu-nm --defined-only "$o" | awk '{print $3}'; done | sort -u)
undefined=$(for o in "${objs[@]}"; do aarch64-linux-gnu-nm -u "$o" | awk '{print $2}'; done | sort -u)
{
    echo "#include <stdlib.h>"
    i=0
    for s in $(comm -23 <(echo "$undefined") <(echo "$defined")); do
        case "$s" in *_assertionFailure*|*_fatalErrorMessage*) continue;; esac
        case "$s" in '$s'*|swift_*|_swift*|__swift*) ;; *) continue;; esac  # C symbols come from libc
        echo "void stub$i(void) __asm__(\"$s\"); void stub$i(void) { abort(); }"
        i=$((i + 1))
    done
} > "$work/stubs.c"
aarch64-linux-gnu-gcc -static -O2 -o "$work/driver" Scripts/arm64/driver.c "$work/stubs.c" "${objs[@]}"
python3 Scripts/arm64/check.py "$work/driver" qemu-aarch64-static || fail=1
exit $fail
