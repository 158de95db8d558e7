#!/usr/bin/env bash
# Runs the tests under the sanitizers, each in a release build with its own scratch path:
#
#   Scripts/sanitizers.sh            # both, as CI runs them
#   Scripts/sanitizers.sh address    # swift test -c release --sanitize=address: the whole suite,
#                                    # LeakSanitizer on (Tests/Sanitizers/lsan.supp)
#   Scripts/sanitizers.sh thread     # swift test -c release --sanitize=thread on TSAN_FILTER
#   TSAN_FILTER=. Scripts/sanitizers.sh thread   # the whole suite under ThreadSanitizer (slow)
#
# Any sanitizer report fails the run (halt_on_error). The reference libraries are required
# (RAMPART_REQUIRE_REFERENCE=1), so the cross-checks run under the sanitizers too.
#
# ThreadSanitizer slows the heavy tests (scrypt, RSA key generation, the long differential loops)
# by 5–15x: the whole suite takes over 45 minutes on a 2-core machine. CI runs the part of the
# suite where concurrency lives: the MTProto module (the socket test server and its limits, the
# handshakes, sessions), the shared state of the primitives (CPU feature detection and its
# overrides, the wipe hook, keys released on other threads), run in parallel by Swift Testing.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

export RAMPART_REQUIRE_REFERENCE=1
default_tsan_filter='RampartMTProtoTests|CPUTests|SymmetricKeyTests|WipeTests|ConstantTimeTests|HMACPBKDF2Tests|SHATests|AESTests|SecretBoxTests|BoxTests|X25519Tests'
tsan_filter=${TSAN_FILTER:-$default_tsan_filter}

which=("$@")
[ ${#which[@]} -eq 0 ] && which=(address thread)
for s in "${which[@]}"; do
    start=$(date +%s)
    case "$s" in
        address)
            echo "== swift test -c release --sanitize=address (LeakSanitizer on)"
            ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1 \
            LSAN_OPTIONS=suppressions="$root/Tests/Sanitizers/lsan.supp":print_suppressions=0 \
                swift test -c release --sanitize=address --scratch-path .build-asan
            ;;
        thread)
            echo "== swift test -c release --sanitize=thread --filter '$tsan_filter'"
            TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
                swift test -c release --sanitize=thread --scratch-path .build-tsan --filter "$tsan_filter"
            ;;
        *) echo "sanitizers.sh: unknown sanitizer $s (address or thread)" >&2; exit 2 ;;
    esac
    echo "== $s sanitizer: passed in $(( $(date +%s) - start )) s"
done
