#!/usr/bin/env bash
# Kill and restart, end to end (issue 38, Docs/Snapshots.md §7), Threema side: two parties of
# `rampart threema client-test --side a|b --identities FILE --state FILE` through `rampart threema serve
# --register-on-login`, each killed with SIGKILL at random moments (every 0.1 to 0.8 s) and started again
# with the same options and state file until it finishes on its own. Every text goes through Ibex (party a
# starts the session; its Init, b's Accept and the 4DH messages all cross restarts), and each party checks
# that every text of the other arrives exactly once and in order (a message delivered again after a
# restart is recognised by the nonce store). Prints the kill counts.
# Usage: Scripts/threema-kill-test.sh PATH/TO/rampart [MESSAGES] [SEED]
set -euo pipefail
bin=${1:?usage: threema-kill-test.sh PATH/TO/rampart [MESSAGES] [SEED]}
messages=${2:-3000}
seed=${3:-$$}
RANDOM=$seed
work=$(mktemp -d)
pids=()
spid=""
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$spid" ] && kill "$spid" 2>/dev/null || true
    pkill -9 -f -- "--state $work/" 2>/dev/null || true
    wait 2>/dev/null || true
}
fail() {
    echo "threema kill test: $1"
    for side in a b; do
        echo "--- party $side: $(cat "$work/$side.kills" 2>/dev/null || echo 0) kills; its last two runs:"
        for f in $(ls "$work"/$side.out.* 2>/dev/null | sort -t. -k3 -n | tail -n 2); do echo "  -- $f"; tail -n 8 "$f"; done
    done
    echo "--- server log (tail)"; tail -n 30 "$work/serve.log" || true
    cleanup
    exit 1
}
"$bin" threema serve --port 0 --register-on-login >"$work/serve.out" 2>"$work/serve.log" &
spid=$!
for _ in $(seq 1 100); do grep -q "^listening on" "$work/serve.out" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/serve.out")
key=$(sed -n 's/^server key \([0-9a-f]*\)$/\1/p' "$work/serve.out")
[ -n "$port" ] && [ ${#key} = 64 ] || fail "the server did not start"

# supervise SIDE: runs the party again and again, killing each run with SIGKILL after a random 0.1–0.8 s
# (never before the first run has written its state file), until a run exits by itself; status 0 only
# when that run printed its summary.
supervise() {
    local side=$1 run=0 kills=0 pid delay status
    while :; do
        run=$((run + 1))
        "$bin" threema client-test --port "$port" --server-key "$key" --side "$side" --identities "$work/identities" \
            --state "$work/$side.state" --messages "$messages" --timeout 60 >"$work/$side.out.$run" 2>&1 &
        pid=$!
        if [ "$run" -eq 1 ]; then
            for _ in $(seq 1 300); do [ -s "$work/$side.state" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
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
        [ "$status" -eq 0 ] && grep -q "^client-test party $side: " "$work/$side.out.$run"
        return
    done
}

t0=$SECONDS
supervise a &
pids+=($!)
supervise b &
pids+=($!)
wait "${pids[0]}" || fail "party a failed"
wait "${pids[1]}" || fail "party b failed"
pids=()
for side in a b; do
    line=$(grep "^client-test party $side: " "$work/$side.out.$(cat "$work/$side.runs")")
    echo "$line" | grep -q ": $messages texts sent, $messages received, each once and in order" || fail "party $side: $line"
done
ka=$(cat "$work/a.kills" 2>/dev/null || echo 0); kb=$(cat "$work/b.kills" 2>/dev/null || echo 0)
[ $((ka + kb)) -ge 4 ] || fail "too few kills to mean anything ($ka + $kb): the runs were too quick"
echo "threema kill test: $messages Ibex texts each way exactly once and in order, party a killed $ka times \
($(grep -o 'restarts: [0-9]*' "$work/a.out.$(cat "$work/a.runs")")), party b killed $kb times \
($(grep -o 'restarts: [0-9]*' "$work/b.out.$(cat "$work/b.runs")")), $((SECONDS - t0)) s (seed $seed)"
kill "$spid" 2>/dev/null || true
wait "$spid" 2>/dev/null || true
spid=""
[ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
