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
#           (a frame over the limit), a half-open handshake (closed by the handshake timeout), a slow reader
#           (dropped over its output budget), 40 connections over the cap (shed); each is logged, the
#           legit pairs succeed, and a new pair is still served afterwards; SIGTERM stops the server
#           with a summary line
#   attacks (issue 35), each while a legitimate client is served and with the server's peak RSS:
#           the queue-budget flood (131 throwaway receivers, 64 envelopes of 8 KiB each: refused past
#           the sender's share); queue memory accounted (64 MiB charged, resident growth at most
#           5/4 of it); 400 half-open sockets at a cap of 64 (silent logged-in users are not shed);
#           the registration flood (one address held to its burst, another still registers); a
#           hello flood for 5 s (the server under 35 % of a core)
#   durable (--dir): SIGKILL and restart: 20 queued messages arrive once and in order, with the
#           identities restored; acknowledged ones stay gone; a kill during traffic loses nothing
#           the server acknowledged
#   closed  (--identities FILE, no --register-on-login): the file is loaded; the driver's fresh
#           identities are not registered and it exits 1
#   usage   bad options (and a malformed identities file) exit 2
#
# Exits nonzero on any mismatch; the servers are always stopped. About a minute and a half.
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
start main --key "$work/server.key" --register-on-login --registration-rate 10:200 --trace "$work/trace" --max-connections 400
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
logged abuse "closing \(protocol violation: .*did not authenticate" "garbage bytes closed the connection"
if "$bin" threema client-test --port "$port" --server-key "$key" --probe oversize --timeout 10 >/dev/null; then
    ok "oversize frame prefix: the server closed the connection"
else
    fail "oversize frame prefix: the connection stayed open"
fi
logged abuse "a frame of 65535 bytes is over the limit" "oversize frame prefix refused before allocation"
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

# ---- attacks of issue 35: each runs while legitimate clients (on 127.0.0.1) must stay served ----
# peak PID: the server's peak resident size (VmHWM) in KiB.
peak() { sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$1/status" 2>/dev/null || echo "?"; }
# cpu PID: the server's user + system clock ticks so far.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# The queue-budget attack: 131 throwaway receivers that never log in again, 64 envelopes of 8 KiB
# each from one sender (67 MB, over the 64 MiB budget). Registration is left unlimited here so the
# attacker gets all its receivers; its sender share (1 MiB) stops it, and the pair keeps talking.
start qflood --register-on-login --registration-rate 0
"$bin" threema client-test --port "$port" --server-key "$key" --source 127.0.0.1 --pairs 2 --messages 5 --duration 8 \
    >"$work/qlegit.out" 2>&1 &
legit=$!
if out=$("$bin" threema client-test --port "$port" --server-key "$key" --source 127.0.0.9 --probe queue-flood \
         --receivers 131 --count 64 --size 8000 --timeout 60); then
    accepted=$(echo "$out" | sed -n 's/.* \([0-9]*\) accepted.*/\1/p')
    if [ -n "$accepted" ] && [ "$accepted" -le 130 ] && echo "$out" | grep -q "has its share of the server's queues in use"; then
        ok "queue flood refused past the sender's share: $out"
    else
        fail "queue flood not bounded by the sender's share: $out"
    fi
else
    fail "queue flood probe: $out"
fi
if wait "$legit"; then ok "legit pairs during the queue flood: $(cat "$work/qlegit.out")"; else fail "legit pairs during the queue flood: $(cat "$work/qlegit.out")"; fi
if out=$("$bin" threema client-test --port "$port" --server-key "$key" --pairs 1); then
    ok "a new pair after the queue flood: $out"
else
    fail "a new pair after the queue flood: $out"
fi
echo "   queue flood: server peak RSS $(peak "$spid") KiB"
stop "$spid" qflood

# Memory accounting: with the shares larger than the budget one sender fills all 64 MiB; the
# resident size may grow by little more than what the budget counts (charged bytes).
start qfull --register-on-login --registration-rate 0 --queue-bytes 1048576 --sender-queue-limit 100000 \
    --sender-queue-bytes 1073741824 --address-queue-bytes 1073741824
base=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$spid/status")
out=$("$bin" threema client-test --port "$port" --server-key "$key" --probe queue-flood --receivers 131 --count 64 --size 8000 \
      --timeout 60 || true)
echo "$out" | grep -q "the server's queue budget is exhausted" && ok "the global budget holds: $out" || fail "global budget: $out"
qpeak=$(peak "$spid")
stop "$spid" qfull
queued=$(sed -n 's/.* messages (\([0-9]*\) bytes) still queued.*/\1/p' "$work/qfull.log")
if [ -n "$queued" ] && [ "$queued" -gt 60000000 ] && [ $(( (qpeak - base) * 1024 )) -le $(( queued * 5 / 4 )) ]; then
    ok "queue memory accounted: $queued bytes charged, resident growth $(( (qpeak - base) * 1024 )) bytes (peak $qpeak KiB)"
else
    fail "queue memory: $queued bytes charged, resident growth $(( (qpeak - base) * 1024 )) bytes (base $base KiB, peak $qpeak KiB)"
fi

# Connection-cap shedding: logged-in users that stay silent outlive 400 sockets (from another
# address) that never finish a handshake, at a cap of 64.
start shed --register-on-login --max-connections 64
idlers=()
for i in 1 2 3; do
    "$bin" threema client-test --port "$port" --server-key "$key" --probe idle --idle 7 >"$work/idle$i.out" 2>&1 &
    idlers+=($!)
done
sleep 1.5
python3 - "$port" <<'PY'
import socket, sys, time
conns = []
for _ in range(400):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5, source_address=("127.0.0.3", 0))
        conns.append(s)
    except OSError:
        pass
time.sleep(3)
for c in conns:
    c.close()
PY
survivors=0
for i in 0 1 2; do wait "${idlers[$i]}" && survivors=$((survivors + 1)); done
[ "$survivors" = 3 ] && ok "3 of 3 silent logged-in users outlived 400 half-open sockets at a cap of 64" \
    || fail "$survivors of 3 silent logged-in users survived the connection flood: $(cat "$work"/idle*.out)"
logged shed "shed: connection limit of 64 reached; not established" "the flood shed its own kind"
echo "   connection flood: server peak RSS $(peak "$spid") KiB"
stop "$spid" shed

# The registration flood: one address registers at most its burst (64); another address is served.
start regflood --register-on-login
out=$("$bin" threema client-test --port "$port" --server-key "$key" --source 127.0.0.4 --probe register-flood --count 150)
registered=$(echo "$out" | sed -n 's/.* \([0-9]*\) registered.*/\1/p')
if [ -n "$registered" ] && [ "$registered" -le 65 ] && [ "$registered" -ge 60 ]; then
    ok "registration flood held to the per-address burst: $out"
else
    fail "registration flood: $out"
fi
logged regflood "registration rate limit for 127.0.0.4 reached" "registration refusals logged"
if out=$("$bin" threema client-test --port "$port" --server-key "$key" --source 127.0.0.1 --pairs 1); then
    ok "another address still registers: $out"
else
    fail "another address after the registration flood: $out"
fi
echo "   registration flood: server peak RSS $(peak "$spid") KiB"
stop "$spid" regflood

# The hello flood: client-hellos from one address as fast as this client can open connections, for
# 5 s; the server refuses them past the per-address rate before any key agreement and stays cheap;
# pairs from 127.0.0.1 are served meanwhile (short ones: a long talk would measure its own CPU).
start hello --register-on-login
c0=$(cpu "$spid")
python3 - "$port" >"$work/hellos" <<'PY' &
import os, socket, sys
import time
port, n, end = int(sys.argv[1]), 0, time.time() + 5
hello = os.urandom(48)              # a client temporary key and cookie
while time.time() < end and n < 1000000:
    batch = []
    for _ in range(64):
        s = socket.socket()
        s.setblocking(False)
        s.bind(("127.0.0.5", 0))
        s.connect_ex(("127.0.0.1", port))
        batch.append(s)
    for s in batch:
        try:
            s.send(hello)
            n += 1
        except OSError:
            pass
        s.close()
print(n)
PY
flood=$!
sleep 1
served=0
for i in 1 2 3; do
    "$bin" threema client-test --port "$port" --server-key "$key" --source 127.0.0.1 --pairs 1 >>"$work/hlegit.out" 2>&1 \
        && served=$((served + 1))
    sleep 0.5
done
wait "$flood"
c1=$(cpu "$spid")
hellos=$(cat "$work/hellos")
share=$(( (c1 - c0) * 100 / (5 * $(getconf CLK_TCK)) ))
if [ "$hellos" -ge 2000 ] && [ "$share" -le 35 ]; then
    ok "hello flood ($hellos hellos in 5 s): the server used ${share}% of a core"
else
    fail "hello flood ($hellos hellos in 5 s, 2000 wanted): the server used ${share}% of a core"
fi
logged hello "handshake refused: rate limit for 127.0.0.5" "hello flood refused by the handshake rate limit"
[ "$served" = 3 ] && ok "3 of 3 pairs served during the hello flood" || fail "$served of 3 pairs served during the hello flood: $(cat "$work/hlegit.out")"
echo "   hello flood: server peak RSS $(peak "$spid") KiB"
stop "$spid" hello

# ---- durable state (--dir): SIGKILL and restart, nothing acknowledged lost, nothing twice ----
mkdir -p "$work/state"
roomy="--queue-limit 5000 --queue-bytes 8388608 --sender-queue-limit 5000 --sender-queue-bytes 8388608"
start durable --register-on-login --key "$work/server.key" --dir "$work/state" $roomy
out=$("$bin" threema client-test --port "$port" --server-key "$key" --probe store --state "$work/ids.state" --count 20)
kill -KILL "$spid"; wait "$spid" 2>/dev/null || true
start durable2 --key "$work/server.key" --dir "$work/state" $roomy
got=$("$bin" threema client-test --port "$port" --server-key "$key" --probe fetch --state "$work/ids.state" || true)
[ "$got" = "probe fetch: 20 messages, stored-0 to stored-19, each once and in order" ] \
    && ok "after SIGKILL: $out; $got (identities restored: no registration on this server)" || fail "after SIGKILL: $out; $got"
kill -KILL "$spid"; wait "$spid" 2>/dev/null || true
start durable3 --register-on-login --key "$work/server.key" --dir "$work/state" $roomy
got=$("$bin" threema client-test --port "$port" --server-key "$key" --probe fetch --state "$work/ids.state" || true)
[ "$got" = "probe fetch: 0 messages, each once and in order" ] && ok "acknowledged messages stay gone after a second SIGKILL: $got" \
    || fail "after the second SIGKILL: $got"
# Killed in the middle of the traffic: everything the server acknowledged arrives, once, in order.
"$bin" threema client-test --port "$port" --server-key "$key" --probe store --state "$work/ids.state" --count 4000 \
    >"$work/store.out" 2>&1 &
storer=$!
sleep 0.7
kill -KILL "$spid"; wait "$spid" 2>/dev/null || true
wait "$storer" || true
acked=$(sed -n 's/^probe store: \([0-9]*\) of 4000 acknowledged before.*/\1/p' "$work/store.out")
start durable4 --key "$work/server.key" --dir "$work/state" $roomy
got=$("$bin" threema client-test --port "$port" --server-key "$key" --probe fetch --state "$work/ids.state" || true)
n=$(echo "$got" | sed -n 's/^probe fetch: \([0-9]*\) messages.*/\1/p')
if [ -n "$acked" ] && [ "$acked" -gt 0 ] && [ -n "$n" ] && [ "$n" -ge "$acked" ] && [ "$n" -le $((acked + 1)) ] \
   && echo "$got" | grep -q "each once and in order"; then
    ok "SIGKILL during traffic: $acked acknowledged, $got"
else
    fail "SIGKILL during traffic: $(cat "$work/store.out"); $got"
fi
logged durable4 "journal: [0-9]+ records replayed, 2 registered identities" "the journal was replayed"
stop "$spid" durable4
[ -z "$(ls "$work/state" | grep -v '^journal$\|^lock$')" ] && ok "no temporary files left in --dir" || fail "files left in --dir: $(ls "$work/state")"

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
    for n in main abuse qflood qfull shed regflood hello durable durable2 durable3 durable4 closed; do echo "--- $n.log (tail)"; tail -20 "$work/$n.log" 2>/dev/null || true; done
    exit 1
fi
echo "threema-chat-test: all checks passed"
