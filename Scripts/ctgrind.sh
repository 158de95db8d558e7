#!/usr/bin/env bash
# Constant time, checked mechanically: runs rampart-ctgrind under valgrind's memcheck with every
# case's secrets marked undefined (the ctgrind method), with the hardware kernels valgrind can
# execute, twice more with AVX2 and with BMI2 hidden (so that each of the two BLAKE2b kernels runs
# whichever the processor's vendor selects, and the SSE and portable fallbacks of the other kernels
# run too), and once with the portable code forced. Fails on any memcheck report that is not a canary.
#
#   Scripts/ctgrind.sh              build (release) and run every case in every configuration
#   Scripts/ctgrind.sh CASE...      only the named cases (see `rampart-ctgrind list`)
#   CTGRIND_VERBOSE=1 Scripts/ctgrind.sh CASE   also print memcheck's reports with stacks
#
# valgrind 3.19 (Debian 12) cannot execute SHA-NI (sha256rnds2 raises SIGILL) or VAES (vaesenc on
# ymm registers: SIGILL) and cannot read the DWARF 5 debug info Swift 6.3's clang emits, so the
# hashes run their portable code and GCM its 128-bit AES-NI/PCLMULQDQ kernel in the first
# configuration (RAMPART_DISABLE_FEATURES=sha,vaes), and the binary is checked from a copy without
# debug info (function names still come from the symbol table). Docs/Architecture.md §6.5 says how
# the wide GCM kernel is kept constant time without valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "ctgrind: valgrind is not installed (apt-get install valgrind)"; exit 1; }
swift build -c release --product rampart-ctgrind >/dev/null
bin=$(swift build -c release --show-bin-path)/rampart-ctgrind
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objcopy --strip-debug "$bin" "$work/rampart-ctgrind"
"$work/rampart-ctgrind" run "$@" >/dev/null   # results must be right outside valgrind too

status=0
for config in "RAMPART_DISABLE_FEATURES=sha,vaes,avx512vl" "RAMPART_DISABLE_FEATURES=sha,vaes,avx512vl,avx2" \
              "RAMPART_DISABLE_FEATURES=sha,vaes,avx512vl,bmi2" "RAMPART_FORCE_PORTABLE=1"; do
    echo "== ctgrind with $config"
    if [ "${CTGRIND_VERBOSE:-0}" = "1" ]; then
        env "$config" valgrind --tool=memcheck --error-limit=no --num-callers=8 "$work/rampart-ctgrind" run "$@" || status=1
    else
        env "$config" valgrind --tool=memcheck --error-limit=no -q --log-file="$work/memcheck.log" \
            "$work/rampart-ctgrind" run "$@" || { status=1; grep -v "^==[0-9]*== *$" "$work/memcheck.log" | swift demangle --simplified | head -60; }
    fi
done
exit $status
