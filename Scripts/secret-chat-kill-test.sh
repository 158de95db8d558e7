#!/usr/bin/env bash
# Kill and restart, end to end (issue 38, Docs/Snapshots.md §7): two secret-chat clients through
# `rampart mtproto serve`'s relay, each run with `--state FILE` and killed with SIGKILL at random moments
# (every 0.1 to 0.8 s, by default) and started again with the same options and state file, until it
# finishes on its own. The chat must still carry every text exactly once and in order (each client checks
# every text it receives against the next one expected and fails on anything else), with the re-keys
# every 100 messages happening across restarts, and both sides must end with the same key fingerprint
# and key hash. Prints the kill counts.
# Usage: Scripts/secret-chat-kill-test.sh PATH/TO/rampart [MESSAGES] [SEED]
set -euo pipefail
bin=${1:?usage: secret-chat-kill-test.sh PATH/TO/rampart [MESSAGES] [SEED]}
messages=${2:-300}
seed=${3:-$$}
RANDOM=$seed
work=$(mktemp -d)
. "$(dirname "$0")/serve-lib.sh"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    pkill -9 -f -- "--state $work/" 2>/dev/null || true
    wait 2>/dev/null || true
}
fail() {
    echo "secret-chat kill test: $1"
    for side in creator acceptor; do
        echo "--- $side: $(cat "$work/$side.kills" 2>/dev/null || echo 0) kills; its last two runs:"
        for f in $(ls "$work"/$side.out.* 2>/dev/null | sort -t. -k3 -n | tail -n 2); do echo "  -- $f"; tail -n 15 "$f"; done
    done
    echo "--- server log (tail)"; tail -n 30 "$work/serve.log" || true
    cleanup
    exit 1
}
server_pid=""
start_mtproto_serve "$bin" "$work/serve.out" "$work/serve.log" --rsa-key "$work/server.pem" ||
    fail "the test server did not start"
"$bin" rsa public --key "$work/server.pem" >"$work/server.pub"

# supervise SIDE ARGS...: runs the client again and again on $work/SIDE.state, killing each run with
# SIGKILL after a random 0.1–0.8 s (never before the first run has logged in, so that the state file
# exists), until a run exits by itself. Exit status 0 only when that run printed "secret chat ok".
supervise() {
    local side=$1 run=0 kills=0 pid delay status
    shift
    while :; do
        run=$((run + 1))
        "$bin" mtproto secret-chat chat --port "$port" --rsa-key "$work/server.pub" --file-bytes 0 --messages "$messages" \
            --state "$work/$side.state" "$@" >"$work/$side.out.$run" 2>&1 &
        pid=$!
        if [ "$run" -eq 1 ]; then
            for _ in $(seq 1 300); do grep -q "^user " "$work/$side.out.1" 2>/dev/null && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        fi
        delay=$((100 + RANDOM % 700))
        for ((i = 0; i < delay / 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        if kill -0 "$pid" 2>/dev/null; then
            kill -9 "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
            kills=$((kills + 1))
            echo "$kills" >"$work/$side.kills"
            continue
        fi
        status=0
        wait "$pid" || status=$?
        echo "$run" >"$work/$side.runs"
        [ "$status" -eq 0 ] && grep -q "^secret chat ok$" "$work/$side.out.$run"
        return
    done
}

t0=$SECONDS
supervise acceptor &
pids+=($!)
for _ in $(seq 1 300); do grep -q "^user " "$work/acceptor.out.1" 2>/dev/null && break; sleep 0.1; done
read -r _ peer _ hash < <(grep "^user " "$work/acceptor.out.1") || fail "the acceptor did not log in"
supervise creator --peer "$peer" --peer-access-hash "$hash" &
pids+=($!)
wait "${pids[1]}" || fail "the creator failed"
wait "${pids[0]}" || fail "the acceptor failed"
pids=()

last() { echo "$work/$1.out.$(cat "$work/$1.runs")"; }
total=$(( messages / 20 * 10 ))
for side in creator acceptor; do
    out=$(last $side)
    grep -q "^texts sent: $total, received: $total$" "$out" || fail "$side counts are off (expected $total each way)"
    grep -q "^rekeys: [1-9]" "$out" || fail "$side did not re-key"
done
for line in key_fingerprint key-hash rekeys; do
    a=$(grep "^$line: " "$(last creator)"); b=$(grep "^$line: " "$(last acceptor)")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "the two sides differ in $line"
done
ck=$(cat "$work/creator.kills" 2>/dev/null || echo 0); ak=$(cat "$work/acceptor.kills" 2>/dev/null || echo 0)
[ $((ck + ak)) -ge 4 ] || fail "too few kills to mean anything ($ck + $ak): the runs were too quick"
# At least one re-key completed in a run that had been restarted from its state file.
rekeys_after_restart=$(for f in "$work"/creator.out.* "$work"/acceptor.out.*; do
    case $f in *.out.1) ;; *) grep "^re-key: " "$f" || true ;; esac; done | wc -l)
[ "$rekeys_after_restart" -ge 1 ] || fail "no re-key happened in a restarted run (rerun with another seed or more messages)"
echo "secret-chat kill test: $total texts each way exactly once and in order, $(grep '^rekeys' "$(last creator)") \
($rekeys_after_restart re-key completions logged by restarted runs), \
creator killed $ck times (restarts: $(grep '^restarts' "$(last creator)" | cut -d' ' -f2)), \
acceptor killed $ak times (restarts: $(grep '^restarts' "$(last acceptor)" | cut -d' ' -f2)), $((SECONDS - t0)) s (seed $seed)"
cleanup
[ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
