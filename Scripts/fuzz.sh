#!/usr/bin/env bash
# Builds rampart-fuzz with libFuzzer and AddressSanitizer and runs every fuzz target (or the ones
# named) for a bounded time, starting from a copy of the committed corpus (Tests/Fuzz/corpus/<target>).
# Nothing is written into the repository. Exits nonzero on any crash, property violation, leak,
# timeout or out-of-memory, printing the reproducer and the command that replays it.
#
#   Scripts/fuzz.sh                          # CI: every target, FUZZ_SECONDS (default 15) each
#   Scripts/fuzz.sh --seconds 600 [target…]  # a longer run
#   Scripts/fuzz.sh --list                   # the targets
#
# Options: --seconds N (FUZZ_SECONDS, default 15), --jobs N (FUZZ_JOBS, default: the number of CPUs,
# at most 2), --out DIR (FUZZ_OUT: keep the grown corpora and any reproducers there instead of a
# temporary directory), --no-build (use the existing .build-fuzz binary). FUZZ_SKIP="a b" leaves out
# targets; FUZZ_RSS_MB (default 2048) is libFuzzer's memory limit per target.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-15}
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
jobs=${FUZZ_JOBS:-$(( cpus < 2 ? cpus : 2 ))}
out=${FUZZ_OUT:-}
rss=${FUZZ_RSS_MB:-2048}
build=1
list=0
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --list) list=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done

start=$(date +%s)
scratch=.build-fuzz
# ld.gold fails on the sanitized objects here (internal error in its DWARF reader); lld links them.
flags=(-c release --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)
if [ "$build" = 1 ]; then
    echo "== building rampart-fuzz with libFuzzer and AddressSanitizer"
    swift build "${flags[@]}" --product rampart-fuzz
fi
bin="$(swift build "${flags[@]}" --show-bin-path)/rampart-fuzz"
[ -x "$bin" ] || { echo "fuzz.sh: $bin not found (run without --no-build)" >&2; exit 2; }
built=$(date +%s)

if [ "$list" = 1 ]; then "$bin" list -l; exit 0; fi
if [ ${#targets[@]} -eq 0 ]; then mapfile -t targets < <("$bin" list); fi
for s in ${FUZZ_SKIP:-}; do
    for i in "${!targets[@]}"; do [ "${targets[$i]}" = "$s" ] && unset "targets[$i]"; done
done
targets=("${targets[@]}")

if [ -n "$out" ]; then
    mkdir -p "$out"
    work=$(cd "$out" && pwd)
    keep=1
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-fuzz.XXXXXX")
    keep=0
fi
echo "== fuzzing ${#targets[@]} targets for ${seconds} s each, ${jobs} at a time (work dir $work)"

# One target: its corpus copied to $work/<t>/corpus, artifacts in $work/<t>/, the log in $work/<t>/log.
run_target() {
    local t=$1 dir="$work/$1"
    mkdir -p "$dir/corpus"
    if [ -d "$root/Tests/Fuzz/corpus/$t" ]; then cp -n "$root/Tests/Fuzz/corpus/$t/"* "$dir/corpus/" 2>/dev/null || true; fi
    local t0 rc
    t0=$(date +%s)
    set +e
    (cd "$dir" && "$bin" run "$t" -max_total_time="$seconds" -rss_limit_mb="$rss" -print_final_stats=1 \
        -artifact_prefix="$dir/" corpus >"$dir/log" 2>&1)
    rc=$?
    set -e
    echo "$rc $(( $(date +%s) - t0 ))" >"$dir/status"
}

# A simple job pool.
pids=()
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.5; done
    run_target "$t" &
    pids+=($!)
done
wait

failed=0
printf '%-28s %6s %10s %8s %s\n' target secs execs exec/s result
for t in "${targets[@]}"; do
    dir="$work/$t"
    read -r rc took <"$dir/status" || { rc=99; took=0; }
    execs=$(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo "?")
    speed=$(grep -m1 -o 'stat::average_exec_per_sec: *[0-9]*' "$dir/log" | grep -o '[0-9]*$' || echo "?")
    artifacts=$(ls "$dir" | grep -E '^(crash|leak|timeout|oom)-' || true)
    if [ "$rc" = 0 ] && [ -z "$artifacts" ]; then
        printf '%-28s %6s %10s %8s %s\n' "$t" "$took" "$execs" "$speed" ok
        continue
    fi
    failed=1
    printf '%-28s %6s %10s %8s %s\n' "$t" "$took" "$execs" "$speed" "FAILED (exit $rc)"
    echo "---- $t: log tail"
    grep -v '^#[0-9]' "$dir/log" | grep -v -E '^\s+(NEW_FUNC|INFO:)' | tail -n 40
    for a in $artifacts; do
        echo "---- $t: reproducer $dir/$a"
        echo "     replay (sanitized build): $bin replay $t $dir/$a"
        echo "     replay (plain build):     swift run -c release rampart-fuzz replay $t $dir/$a"
    done
done

end=$(date +%s)
echo "== build $(( built - start )) s, fuzzing $(( end - built )) s, total $(( end - start )) s"
if [ "$failed" = 1 ]; then
    echo "fuzz.sh: FAILED; reproducers and logs kept in $work" >&2
    exit 1
fi
if [ "$keep" = 0 ]; then rm -rf "$work"; else echo "== corpora and logs in $work"; fi
echo "fuzz.sh: all ${#targets[@]} targets passed"
