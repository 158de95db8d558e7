#!/usr/bin/env bash
# Runs the tests under the sanitizers, each in a release build with its own scratch path:
#
#   Scripts/sanitizers.sh            # both, as CI runs them
#   Scripts/sanitizers.sh address    # swift test -c release --sanitize=address: the whole suite but
#                                    # the heavy vector cases (RAMPART_SKIP_HEAVY=0 keeps them),
#                                    # LeakSanitizer on (Tests/Sanitizers/lsan.supp)
#   Scripts/sanitizers.sh thread     # swift test -c release --sanitize=thread, all but TSAN_SKIP
#   TSAN_SKIP='^$' Scripts/sanitizers.sh thread  # the whole suite under ThreadSanitizer (slow)
#
# Any sanitizer report fails the run (halt_on_error). The reference libraries are required
# (RAMPART_REQUIRE_REFERENCE=1), so the cross-checks run under the sanitizers too.
#
# ThreadSanitizer slows single-threaded number crunching by 5–15x: with everything in, the suite
# takes over 45 minutes on a 2-core machine. CI leaves out (TSAN_SKIP) only tests that run one
# thread through long computations and gain nothing from it: the vector files (every one also runs
# in the plain and the AddressSanitizer suites), RFC 7748's million X25519 iterations, and the
# memory scans of SecretLifetimeTests (serialized). Everything else runs, in parallel as Swift
# Testing schedules it, in about two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

export RAMPART_REQUIRE_REFERENCE=1
# The heavy vector cases (RFC 7748's million X25519 iterations on both backends, 16.7 M PBKDF2
# iterations, scrypt at N = 2^20) are long single-threaded chains through code every lighter case also
# runs; CI runs them in the plain release build (`rampart vectors`), not again under a sanitizer.
export RAMPART_SKIP_HEAVY=${RAMPART_SKIP_HEAVY:-1}
tsan_skip=${TSAN_SKIP:-'namedVectorFile|ownVectorFile|threemaVectorFile|IteratedMillion|SecretLifetimeTests'}

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
            echo "== swift test -c release --sanitize=thread --skip '$tsan_skip'"
            TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
                swift test -c release --sanitize=thread --scratch-path .build-tsan --skip "$tsan_skip"
            ;;
        *) echo "sanitizers.sh: unknown sanitizer $s (address or thread)" >&2; exit 2 ;;
    esac
    echo "== $s sanitizer: passed in $(( $(date +%s) - start )) s"
done
