#!/usr/bin/env bash
# End-to-end test of `rampart threema serve` (the loopback chat server) with the Swift client driver
# `rampart threema client-test`, and the server under abuse.
#
#   Scripts/threema-chat-test.sh [PATH-TO-RAMPART]
#
# Without a path it builds the release `rampart`. It starts servers on 127.0.0.1 with --port 0
# (reading the real port and the server key from stdout) and checks:
#
#   main    (--register-on-login --key FILE --trace FILE): the key file is created with mode 0600 and
#           read again by a restart (same server key); 1 pair, then 50 concurrent pairs, every
#           plaintext delivered exactly once and in order (plain e2e, Ibex 2DH/4DH, offline queue);
#           the trace holds every payload the server handled (the echo control marker is in it, as
#           hex) but never a message plaintext marker
#   abuse   (--max-connections 24 --handshake-timeout 2): while two legit pairs talk (6 s): garbage bytes
#           (closed with a protocol violation), an oversize frame length prefix after a real login
#           (frameTooLarge), a half-open handshake (closed by the handshake timeout), a slow reader
#           (dropped over its output budget), 40 connections over the cap (shed); each is logged, the
#           legit pairs succeed, and a new pair is still served afterwards; SIGTERM stops the server
#           with a summary line
#   closed  (--identities FILE, no --register-on-login): the file is loaded; the driver's fresh
#           identities are not registered and it exits 1
#   usage   bad options (and a malformed identities file) exit 2
#
# Exits nonzero on any mismatch; the servers are always stopped. About half a minute.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-}
if [ -z "$bin" ]; then
    swift build -c release --product rampart >/dev/null
    bin=$(swift build -c release --show-bin-path)/rampart
fi
[ -x "$bin" ] || { echo "usage: $0 [PATH-TO-RAMPART]"; exit 2; }
command -v python3 >/dev/null || { echo "threema-chat-test: python3 is required"; exit 2; }

work=$(mktemp -d)
pids=()
failures=0
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
hexof() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

# start NAME ARGS...: starts a server; sets $port, $key and $spid.
start() {
    local name=$1; shift
    "$bin" threema serve --port 0 "$@" >"$work/$name.out" 2>"$work/$name.log" &
    spid=$!
    pids+=($spid)
    for _ in $(seq 1 100); do grep -q "^listening on" "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/$name.out")
    key=$(sed -n 's/^server key \([0-9a-f]*\)$/\1/p' "$work/$name.out")
    [ -n "$port" ] && [ ${#key} = 64 ] || { echo "the $name server did not start"; cat "$work/$name.log"; exit 1; }
    echo "== $name server on 127.0.0.1:$port, key ${key:0:16}…"
}

# stop PID NAME: SIGTERM, wait, and check the summary line.
stop() {
    kill -TERM "$1"
    wait "$1" 2>/dev/null || true
    grep -q "stopped; " "$work/$2.log" && ok "$2 server stopped with a summary: $(grep -o 'stopped; .*' "$work/$2.log")" \
        || fail "$2 server: no summary line on SIGTERM"
}

logged() { # logged NAME PATTERN WHAT
    if grep -qE "$2" "$work/$1.log"; then ok "$3 (logged: $(grep -E "$2" "$work/$1.log" | head -1 | cut -c1-140))"; else fail "$3: no log line /$2/"; fi
}

# ---- main: key file, 1 pair, 50 pairs, trace ----
start keygen --key "$work/server.key"
first_key=$key
mode=$(stat -c %a "$work/server.key" 2>/dev/null || stat -f %Lp "$work/server.key")
[ "$mode" = 600 ] && ok "key file created with mode 600" || fail "key file mode $mode"
stop "$spid" keygen

marker="RMK$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start main --key "$work/server.key" --register-on-login --trace "$work/trace" --max-connections 400
[ "$key" = "$first_key" ] && ok "the key file is read again (same server key)" || fail "the server key changed across restarts"
main_pid=$spid
if out=$("$bin" threema client-test --port "$port" --server-key "$key" --pairs 1 --marker "$marker"); then
    ok "1 pair: $out"
else
    fail "1 pair: $out"
fi
t0=$SECONDS
if out=$("$bin" threema client-test --port "$port" --server-key "$key" --pairs 50 --marker "$marker"); then
    ok "50 concurrent pairs in $((SECONDS - t0)) s: $out"
else
    fail "50 concurrent pairs: $out"
fi
echo "$out" | grep -q "50 pairs, 1800/1800 messages delivered exactly once and in order, 0 failed pairs" \
    || fail "50 pairs: not every message counted"
# A wrong pinned key: the client refuses the server (exit 1), and nothing is delivered.
if "$bin" threema client-test --port "$port" --server-key "$(printf '%064d' 9)" --pairs 1 --timeout 5 >/dev/null 2>&1; then
    fail "a client with a wrong pinned server key succeeded"
else
    ok "a client with a wrong pinned server key fails"
fi
stop "$main_pid" main
lines=$(wc -l <"$work/trace")
[ "$lines" -gt 1000 ] && ok "trace holds $lines payloads" || fail "trace holds only $lines payloads"
# The control: the echo payload's marker is in the trace as hex, so the search below can see plaintext.
grep -q "$(hexof "$marker-echo")" "$work/trace" && ok "trace check control: the echo marker is in the trace" \
    || fail "trace check control: the echo marker is missing (the check below would prove nothing)"
if grep -q "$(hexof "$marker-m")" "$work/trace" || grep -q "$marker-m" "$work/trace"; then
    fail "a message plaintext marker appears in the trace"
else
    ok "no message plaintext marker in the trace (neither hex nor text)"
fi

# ---- abuse ----
start abuse --register-on-login --max-connections 24 --handshake-timeout 2 --queue-limit 1000 --queue-bytes 1048576
abuse_pid=$spid
"$bin" threema client-test --port "$port" --server-key "$key" --pairs 2 --messages 20 --duration 6 >"$work/legit.out" 2>&1 &
legit=$!
python3 - "$port" <<'PY'
import os, socket, sys
port = int(sys.argv[1])
s = socket.create_connection(("127.0.0.1", port))
s.sendall(os.urandom(400))          # a client-hello, then a login box that does not authenticate
s.settimeout(5)
try:
    while s.recv(4096):
        pass
except OSError:
    pass
s.close()
PY
logged abuse "closing \(protocol violation: .*authenticationFailed" "garbage bytes closed the connection"
if "$bin" threema client-test --port "$port" --server-key "$key" --probe oversize --timeout 10 >/dev/null; then
    ok "oversize frame prefix: the server closed the connection"
else
    fail "oversize frame prefix: the connection stayed open"
fi
logged abuse "frameTooLarge\(65535\)" "oversize frame prefix refused before allocation"
if python3 - "$port" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"\x01" * 20)             # part of a client-hello, never completed
s.settimeout(6)
start = time.time()
try:
    data = s.recv(4096)
except OSError:
    data = b""
took = time.time() - start
s.close()
sys.exit(0 if data == b"" and took < 5.5 else 1)
PY
then ok "half-open handshake closed by the server"; else fail "half-open handshake not closed"; fi
logged abuse "handshake not completed within 2 s" "half-open handshake timed out"
if "$bin" threema client-test --port "$port" --server-key "$key" --probe slow-reader --timeout 20 >"$work/slow.out"; then
    ok "slow reader: $(cat "$work/slow.out")"
else
    fail "slow reader: the connection stayed open"
fi
logged abuse "output buffer over [0-9]+ bytes: the peer is not reading" "slow reader dropped over its output budget"
python3 - "$port" <<'PY'
import socket, sys, time
conns = []
for _ in range(40):
    try:
        conns.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5))
    except OSError:
        pass
    time.sleep(0.005)
time.sleep(0.5)
for c in conns:
    c.close()
PY
logged abuse "shed: connection limit of 24 reached" "connections over the cap shed"
kill -0 "$legit" 2>/dev/null && ok "the legit pairs were still talking when the probes ended" \
    || fail "the legit pairs finished before the probes ended (raise --duration)"
if wait "$legit"; then ok "legit pairs during the abuse: $(cat "$work/legit.out")"; else fail "legit pairs during the abuse: $(cat "$work/legit.out")"; fi
if out=$("$bin" threema client-test --port "$port" --server-key "$key" --pairs 1); then
    ok "still serving after the abuse: $out"
else
    fail "not serving after the abuse: $out"
fi
stop "$abuse_pid" abuse

# ---- without --register-on-login: known identities only ----
pub=$("$bin" x25519 --scalar 0707070707070707070707070707070707070707070707070707070707070707)
printf '# test identities\nALICE001 %s\nBOB00001 %s  # a comment\n' "$pub" "$pub" >"$work/ids"
start closed --identities "$work/ids"
logged closed "2 known identities, register-on-login off" "--identities FILE loaded"
if "$bin" threema client-test --port "$port" --server-key "$key" --pairs 1 --timeout 5 >/dev/null 2>&1; then
    fail "unknown identities logged in without --register-on-login"
else
    ok "unknown identities are refused without --register-on-login"
fi
stop "$spid" closed
# (The preamble reads as a client-hello there, so the client's handshake fails first.)
logged closed "stopped; .* 2 identities" "no identity was registered"

# ---- usage ----
set +e
"$bin" threema serve --port 0 --queue-limit 0 >/dev/null 2>&1; rc1=$?
"$bin" threema serve --bogus 1 >/dev/null 2>&1; rc2=$?
"$bin" threema client-test --port 1 --server-key abcd >/dev/null 2>&1; rc3=$?
printf 'ALICE001 nothex\n' >"$work/bad-ids"
"$bin" threema serve --port 0 --identities "$work/bad-ids" >/dev/null 2>&1; rc4=$?
set -e
[ "$rc1$rc2$rc3$rc4" = 2222 ] && ok "bad options exit 2" || fail "bad options: exit statuses $rc1 $rc2 $rc3 $rc4, expected 2 2 2 2"

if [ "$failures" -ne 0 ]; then
    echo "threema-chat-test: $failures failure(s)"
    for n in main abuse closed; do echo "--- $n.log (tail)"; tail -20 "$work/$n.log" 2>/dev/null || true; done
    exit 1
fi
echo "threema-chat-test: all checks passed"
