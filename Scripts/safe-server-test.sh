#!/usr/bin/env bash
# End-to-end test of `rampart threema safe-server` with curl, a client nobody here wrote.
#
#   Scripts/safe-server-test.sh PATH-TO-RAMPART
#
# Builds nothing: it takes the path of a built `rampart` (debug or release). It starts servers on
# 127.0.0.1 with --port 0 (reading the real port from the `listening on` line) and a fresh
# directory each, then checks:
#
#   main    (--max-backup-bytes 4096 --rate 0): GET config (JSON, exact body); PUT a random blob
#           (201), PUT again (204), GET it back byte-identical (cmp); the file on disk; GET without
#           `Accept: application/octet-stream` (400); DELETE (204), GET (404), DELETE (404); bad IDs
#           (400); wrong or missing Content-Type (400); an oversized PUT (413); POST (405); an unknown
#           path (404); three pipelined requests on one raw socket (three answers in order);
#           garbage bytes on a raw socket answered 400 and closed (with a log line) while another
#           connection holds a half-sent request and a concurrent curl is served
#   rate    (--rate 0.2:3): three requests pass, the fourth gets 429 with Retry-After
#   auth    (--auth-file): no credentials and wrong ones get 401 with WWW-Authenticate, the right
#           ones 200 (curl reads them from a config file, not argv)
#   limits  (--max-connections 2 --request-timeout 3 --idle-timeout 3): at the cap an idle connection
#           is closed for a newcomer, and with both inside a request a newcomer gets 503;
#           a request trickling past the timeout and an idle connection are closed (and logged);
#           curl is still served; SIGTERM stops the main server with a summary line
#   usage   bad options exit 2
#   client  the Swift client (rampart threema safe backup/restore) round trip, curl's copy decrypted
#   issue 35, each with the server's peak RSS: one address with 64 keep-alive connections sending
#           \r\n every second (16 admitted, all closed at the request timeout, curl served
#           throughout); 64 slow requests from 4 addresses (served again within the request
#           timeout); a 64 MiB upload (under 10 s); an unauthenticated flood behind one address
#           with --auth-file (429 for it, users served, per-user limits); the storage quota
#           (507), the new-backup rate (429), a stale temporary file removed at start, no 8
#           digits of any backup ID in any log (long --base); the Swift client against hostile
#           servers (Content-Length -5, endless headers, a trickle: exit 1 within --timeout) and
#           a chunked response (restores); credentials in the URL and extra arguments refused
#
# Exits nonzero on any mismatch; the servers are always stopped. About 40 seconds.
set -euo pipefail

bin=${1:-}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "usage: $0 PATH-TO-RAMPART"; exit 2; }
command -v curl >/dev/null || { echo "safe-server-test: curl is required"; exit 2; }
command -v python3 >/dev/null || { echo "safe-server-test: python3 is required"; exit 2; }

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
# expect NAME EXPECTED ACTUAL
expect() { if [ "$2" = "$3" ]; then ok "$1 ($3)"; else fail "$1: expected $2, got $3"; fi; }

# start NAME ARGS...: starts a server with its own directory; sets $port and $dir.
start() {
    local name=$1; shift
    dir="$work/$name"
    mkdir -p "$dir"
    "$bin" threema safe-server --port 0 --dir "$dir" "$@" >"$work/$name.out" 2>"$work/$name.log" &
    pids+=($!)
    for _ in $(seq 1 100); do grep -q "^listening on" "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/$name.out")
    [ -n "$port" ] || { echo "the $name server did not start"; cat "$work/$name.log"; exit 1; }
    echo "== $name server on 127.0.0.1:$port"
}

# status ARGS...: the HTTP status of one curl request.
status() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }

id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
oct="Content-Type: application/octet-stream"

start main --max-backup-bytes 4096 --rate 0
base="http://127.0.0.1:$port"

config=$(curl -s --max-time 10 -H 'Accept: application/json' -D "$work/config.h" "$base/config")
expect "GET config body" '{"maxBackupBytes":4096,"retentionDays":180}' "$config"
grep -qi '^content-type: application/json' "$work/config.h" && ok "GET config is application/json" || fail "GET config content type"

head -c 3000 /dev/urandom >"$work/blob"
expect "PUT new backup" 201 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$base/backups/$id")"
head -c 2500 /dev/urandom >"$work/blob"
expect "PUT over it" 204 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$base/backups/$id")"
expect "GET it back" 200 "$(status -H 'Accept: application/octet-stream' -o "$work/back" "$base/backups/$id")"
curl -s --max-time 10 -H 'Accept: application/octet-stream' -o "$work/back" "$base/backups/$id"
cmp -s "$work/blob" "$work/back" && ok "GET returns the blob byte for byte" || fail "GET returned different bytes"
cmp -s "$work/blob" "$dir/$id" && ok "the backup is the file $id" || fail "no file $id with the blob"
[ -z "$(find "$dir" -name '.tmp-*')" ] && ok "no temporary files left" || fail "temporary files left"
expect "GET without Accept: application/octet-stream" 400 "$(status "$base/backups/$id")"
expect "DELETE" 204 "$(status -X DELETE "$base/backups/$id")"
expect "GET after DELETE" 404 "$(status -H 'Accept: application/octet-stream' "$base/backups/$id")"
expect "DELETE again" 404 "$(status -X DELETE "$base/backups/$id")"
upper=$(echo "$id" | tr a-f A-F)
expect "PUT with an uppercase ID" 400 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$base/backups/$upper")"
expect "GET with a short ID" 400 "$(status -H 'Accept: application/octet-stream' "$base/backups/${id:0:63}")"
expect "DELETE with a non-hex ID" 400 "$(status -X DELETE "$base/backups/${id:0:63}g")"
expect "PUT with Content-Type text/plain" 400 "$(status -X PUT -H 'Content-Type: text/plain' --data-binary @"$work/blob" "$base/backups/$id")"
expect "PUT without Content-Type" 400 "$(status -X PUT -H 'Content-Type:' --data-binary @"$work/blob" "$base/backups/$id")"
head -c 5000 /dev/urandom >"$work/big"
expect "PUT over maxBackupBytes" 413 "$(status -X PUT -H "$oct" --data-binary @"$work/big" "$base/backups/$id")"
head -c 12000 /dev/urandom >"$work/big"
expect "PUT at 3 x maxBackupBytes (body discarded, then closed)" 413 "$(status -X PUT -H "$oct" --data-binary @"$work/big" "$base/backups/$id")"
head -c 3000000 /dev/urandom >"$work/big"
expect "PUT of 3 MB (Expect: 100-continue, refused before the body)" 413 "$(status -X PUT -H "$oct" --data-binary @"$work/big" "$base/backups/$id")"
expect "POST" 405 "$(status -X POST -H "$oct" --data-binary @"$work/blob" "$base/backups/$id")"
expect "unknown path" 404 "$(status "$base/elsewhere")"

# Raw sockets: pipelining, then garbage while a half-sent request is held and curl is served.
if python3 - "$port" <<'PY'
import os, socket, subprocess, sys
port = int(sys.argv[1])
def read_all(s):
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk
# Three pipelined requests in one write; the last asks to close.
s = socket.create_connection(("127.0.0.1", port), timeout=10)
one = b"GET /config HTTP/1.1\r\nHost: x\r\n\r\n"
s.sendall(one + one + b"GET /config HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
data = read_all(s)
s.close()
assert data.count(b"HTTP/1.1 200 OK\r\n") == 3, data
print("ok: three pipelined requests answered in order")
# A client that has sent half a request and waits.
held = socket.create_connection(("127.0.0.1", port), timeout=10)
held.sendall(b"GET /config HTTP/1.1\r\nHost: x\r\n")
# Garbage: answered 400 and closed.
for n in (1, 300, 5000):
    g = socket.create_connection(("127.0.0.1", port), timeout=10)
    g.sendall(b"\x16\x03\x01" + os.urandom(n))
    try:
        data = read_all(g)
    except ConnectionResetError:
        data = b"(reset)"
    g.close()
    assert data.startswith(b"HTTP/1.1 400 "), data[:80]
print("ok: garbage connections answered 400 and closed")
# A concurrent curl is served while the half-sent request is held.
out = subprocess.run(["curl", "-s", "--max-time", "10", f"http://127.0.0.1:{port}/config"], capture_output=True, check=True).stdout
assert out.startswith(b'{"maxBackupBytes"'), out
print("ok: curl served while another connection is held")
held.sendall(b"Connection: close\r\n\r\n")
data = read_all(held)
held.close()
assert data.startswith(b"HTTP/1.1 200 OK\r\n"), data[:80]
print("ok: the held connection is served when its request completes")
PY
then :; else fail "raw-socket checks"; fi
sleep 0.3
grep -q "malformed request line; closing" "$work/main.log" && ok "garbage is logged" || fail "no log line for the garbage"

start rate --rate 0.2:3
codes=""
for _ in 1 2 3 4; do codes="$codes$(status "http://127.0.0.1:$port/config") "; done
expect "rate limit 0.2/s, burst 3" "200 200 200 429 " "$codes"
curl -s -o /dev/null -D "$work/rate.h" --max-time 10 "http://127.0.0.1:$port/config"
grep -qi '^retry-after: [0-9]' "$work/rate.h" && ok "429 carries Retry-After" || fail "429 without Retry-After"

printf 'alice:correct horse battery\n' >"$work/credentials"
chmod 600 "$work/credentials"
start auth --auth-file "$work/credentials"
printf 'user = "alice:correct horse battery"\n' >"$work/curl-good"
printf 'user = "alice:wrong"\n' >"$work/curl-bad"
curl -s -o /dev/null -D "$work/auth.h" --max-time 10 "http://127.0.0.1:$port/config"
expect "no credentials" 401 "$(sed -n '1s/^HTTP\/1.1 \([0-9]*\).*/\1/p' "$work/auth.h")"
grep -qi '^www-authenticate: basic' "$work/auth.h" && ok "401 carries WWW-Authenticate: Basic" || fail "401 without WWW-Authenticate"
expect "wrong password" 401 "$(status -K "$work/curl-bad" "http://127.0.0.1:$port/config")"
expect "right password" 200 "$(status -K "$work/curl-good" "http://127.0.0.1:$port/config")"
expect "right password, PUT" 201 "$(status -K "$work/curl-good" -X PUT -H "$oct" --data-binary @"$work/blob" "http://127.0.0.1:$port/backups/$id")"

# Connection cap and timeouts (slow client, idle), with the others still served.
# The request timeout leaves room for a loaded CI machine: the 503 check below must run before the
# first slow request times out (with 1 s it did not once, and the fourth connection, let in, saw only
# the idle close).
start limits --max-connections 2 --request-timeout 3 --idle-timeout 3 --rate 0
if python3 - "$port" <<'PY'
import socket, subprocess, sys, time
port = int(sys.argv[1])
slow = socket.create_connection(("127.0.0.1", port), timeout=10)
slow.sendall(b"GET /config HTTP/1.1\r\n")       # never finished
idle = socket.create_connection(("127.0.0.1", port), timeout=10)
time.sleep(0.3)
def closed_within(s, seconds):
    s.settimeout(seconds)
    try:
        return s.recv(4096) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
# At the cap the connection idle the longest makes room for a newcomer.
third = socket.create_connection(("127.0.0.1", port), timeout=10)
assert closed_within(idle, 3), "the idle connection was not let go for the newcomer"
print("ok: at --max-connections the idle connection is closed for a new one")
third.sendall(b"GET /con")
time.sleep(0.3)
# Every connection inside a request: the newcomer gets 503.
fourth = socket.create_connection(("127.0.0.1", port), timeout=10)
data = fourth.recv(4096)
assert data.startswith(b"HTTP/1.1 503 "), data[:60]
print("ok: with every connection inside a request a new one gets 503")
fourth.close()
assert closed_within(slow, 6), "the slow client was not closed"
print("ok: a request trickling past --request-timeout is closed")
assert closed_within(third, 6), "the second slow client was not closed"
idle = socket.create_connection(("127.0.0.1", port), timeout=10)
assert closed_within(idle, 6), "the idle connection was not closed"
print("ok: an idle connection is closed after --idle-timeout")
out = subprocess.run(["curl", "-s", "--max-time", "10", f"http://127.0.0.1:{port}/config"], capture_output=True, check=True).stdout
assert out.startswith(b'{"maxBackupBytes"'), out
print("ok: curl served after the timeouts")
PY
then :; else fail "connection cap and timeout checks"; fi
grep -q "slow client" "$work/limits.log" && grep -q "idle for" "$work/limits.log" && ok "timeouts are logged" || fail "timeouts not logged"

# The Swift client against the server: rampart threema safe backup, then restore; curl fetches the
# same backup and `rampart threema safe decrypt` with the derived key reads it (the password comes
# from a file, never argv).
start client --max-backup-bytes 65536 --rate 0
client_base="http://127.0.0.1:$port"
printf 'client round trip password\n' >"$work/safe.pw"
sk=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
pk64=$(python3 -c "import base64,sys; print(base64.b64encode(bytes.fromhex(sys.argv[1])).decode())" "$sk")
printf '{"info":{"version":1,"device":"ci"},"user":{"privatekey":"%s","nickname":"CI"},"contacts":[{"identity":"ECHOECHO","verification":2}],"settings":{"syncContacts":false}}' "$pk64" >"$work/doc.json"
if backup_id=$("$bin" threema safe backup --server "$client_base/" --id ECHOECHO --password-file "$work/safe.pw" --json-file "$work/doc.json"); then
    ok "rampart threema safe backup uploaded $backup_id"
    [ -f "$dir/$backup_id" ] && ok "the backup is stored under its backup ID" || fail "no file for backup ID $backup_id"
    "$bin" threema safe restore --server "$client_base" --id ECHOECHO --password-file "$work/safe.pw" >"$work/restored.json" \
        && python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)" "$work/doc.json" "$work/restored.json" \
        && ok "rampart threema safe restore returns the document" || fail "restore differs or failed"
    key=$("$bin" threema safe derive --id ECHOECHO --password-file "$work/safe.pw" | sed -n 2p)
    curl -s --max-time 10 -H 'Accept: application/octet-stream' "$client_base/backups/$backup_id" -o "$work/fetched"
    "$bin" threema safe decrypt --key "$key" <"$work/fetched" >"$work/decrypted.json" \
        && cmp -s "$work/decrypted.json" "$work/restored.json" && ok "curl's copy decrypts with the derived key" || fail "curl's copy does not decrypt"
    printf 'a different password\n' >"$work/wrong.pw"
    set +e
    "$bin" threema safe restore --server "$client_base" --id ECHOECHO --password-file "$work/wrong.pw" >"$work/wrong.out" 2>/dev/null
    expect "restore with a wrong password (another backup ID) exits" 1 "$?"
    set -e
    [ ! -s "$work/wrong.out" ] && ok "nothing on stdout for the wrong password" || fail "output for a wrong password"
else
    fail "rampart threema safe backup failed"
fi

# ---- Issue 35: the attacks that used to work, run again; legitimate clients are served during and
# after each. The server's peak resident memory (VmHWM) is printed after each attack.
peak() { awk '/VmHWM/ {print $2 " kB"}' "/proc/$1/status" 2>/dev/null || echo "?"; }

# Lockout with keep-alive bytes: one address opens 64 connections and sends \r\n on each every
# second. It gets only its per-address share; a client elsewhere is served throughout; the
# attacker's connections are closed at the request timeout although bytes keep coming.
start lockout --max-connections 64 --max-connections-per-address 16 --request-timeout 3 --idle-timeout 4 --rate 0
lockout_pid=${pids[${#pids[@]}-1]}
if python3 - "$port" <<'PY'
import socket, subprocess, sys, time
port = int(sys.argv[1])
held, refused = [], 0
for _ in range(64):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
    s.setblocking(False)
    held.append(s)
time.sleep(0.5)
alive = []
for s in held:
    try:
        data = s.recv(4096)
        if data.startswith(b"HTTP/1.1 503 "):
            refused += 1
            continue
    except BlockingIOError:
        alive.append(s)
        continue
    except ConnectionResetError:
        refused += 1
assert len(alive) == 16 and refused == 48, (len(alive), refused)
print("ok: one address gets 16 of 64 connections; 48 answered 503")
start = time.time()
served = 0
closed_at = {}
while time.time() - start < 8:
    for s in alive:
        if s in closed_at:
            continue
        try:
            s.send(b"\r\n")
        except OSError:
            closed_at[s] = time.time() - start
            continue
        try:
            if s.recv(4096) == b"":
                closed_at[s] = time.time() - start
        except BlockingIOError:
            pass
        except OSError:
            closed_at[s] = time.time() - start
    out = subprocess.run(["curl", "-s", "--max-time", "5", f"http://127.0.0.1:{port}/config"], capture_output=True).stdout
    if out.startswith(b'{"maxBackupBytes"'):
        served += 1
    else:
        raise SystemExit(f"curl not served during the attack: {out[:80]!r}")
    time.sleep(1)
assert len(closed_at) == 16, f"only {len(closed_at)} of 16 keep-alive connections closed"
assert max(closed_at.values()) < 6.5, closed_at.values()
print(f"ok: curl served {served} times during the attack; all 16 connections closed at "
      f"{min(closed_at.values()):.1f}-{max(closed_at.values()):.1f} s despite the \\r\\n every second")
PY
then :; else fail "lockout with keep-alive bytes"; fi
echo "   peak RSS under the keep-alive lockout: $(peak "$lockout_pid")"

# Many addresses fill every slot with requests that never finish: refused while they last (at
# most the request timeout), served at once after.
if python3 - "$port" <<'PY'
import socket, subprocess, sys, time
port = int(sys.argv[1])
held = []
for a in range(4):
    for _ in range(16):
        s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(f"127.0.0.{10 + a}", 0))
        s.sendall(b"PUT /backups/")
        held.append(s)
t = time.time()
while True:
    out = subprocess.run(["curl", "-s", "--max-time", "5", f"http://127.0.0.1:{port}/config"], capture_output=True).stdout
    if out.startswith(b'{"maxBackupBytes"'):
        break
    assert time.time() - t < 6, "not served again within twice the request timeout"
    time.sleep(0.25)
print(f"ok: 64 slow requests from 4 addresses fill the server; served again after {time.time() - t:.1f} s")
PY
then :; else fail "slots filled from many addresses"; fi

# A 64 MiB upload (the largest --max-backup-bytes) is linear: it used to take minutes.
start bigup --max-backup-bytes 67108864 --rate 0
big_pid=${pids[${#pids[@]}-1]}
head -c 67108864 /dev/urandom >"$work/huge"
t_start=$(date +%s.%N)
code=$(status --max-time 60 -X PUT -H "$oct" --data-binary @"$work/huge" "http://127.0.0.1:$port/backups/$id")
t_end=$(date +%s.%N)
secs=$(python3 -c "print(f'{$t_end - $t_start:.2f}')")
expect "PUT of 64 MiB" 201 "$code"
python3 -c "import sys; sys.exit(0 if $secs < 10 else 1)" && ok "64 MiB uploaded in $secs s" || fail "64 MiB took $secs s"
cmp -s "$work/huge" "$work/bigup/$id" && ok "the 64 MiB backup is stored byte for byte" || fail "the 64 MiB backup differs"
echo "   peak RSS after the 64 MiB upload: $(peak "$big_pid")"
rm -f "$work/huge"

# Behind one address with credentials: an unauthenticated flood gets 429, users go on.
printf '# users\nalice:alice password\nbob:bob password\n' >"$work/users"
start authflood --auth-file "$work/users" --rate 5:5 --auth-failure-rate 1:5
printf 'user = "alice:alice password"\n' >"$work/curl-alice"
printf 'user = "bob:bob password"\n' >"$work/curl-bob"
codes=""
for _ in $(seq 1 30); do codes="$codes$(status "http://127.0.0.1:$port/config") "; done
echo "$codes" | grep -q "429" && ok "an unauthenticated flood is limited (429)" || fail "no 429 for the unauthenticated flood: $codes"
expect "alice is served during the flood" 200 "$(status -K "$work/curl-alice" "http://127.0.0.1:$port/config")"
expect "bob is served during the flood" 200 "$(status -K "$work/curl-bob" "http://127.0.0.1:$port/config")"
codes=""
for _ in $(seq 1 7); do codes="$codes$(status -K "$work/curl-alice" "http://127.0.0.1:$port/config") "; done
echo "$codes" | grep -q "429" && ok "alice's own rate limit applies to alice ($codes)" || fail "alice not limited: $codes"
expect "bob still served" 200 "$(status -K "$work/curl-bob" "http://127.0.0.1:$port/config")"

# Storage quota, the new-backup rate, stale temporary files, no backup ID in any log line.
mkdir -p "$work/quota"
stale=".tmp-$id-999999999-1"
printf 'left by a crash' >"$work/quota/$stale"
long_base="/$(printf 'b%.0s' $(seq 1 70))/"
start quota --max-backups 2 --new-backups-per-day 3 --base "$long_base" --rate 0
[ ! -e "$work/quota/$stale" ] && ok "a temporary file of a dead writer is removed at start" || fail "stale temporary file left"
qbase="http://127.0.0.1:$port${long_base%/}"
ids=()
for _ in 1 2 3 4; do ids+=("$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"); done
expect "quota: first backup" 201 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$qbase/backups/${ids[0]}")"
expect "quota: second backup" 201 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$qbase/backups/${ids[1]}")"
expect "quota: a third is over --max-backups" 507 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$qbase/backups/${ids[2]}")"
expect "quota: replacing one is fine" 204 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$qbase/backups/${ids[0]}")"
expect "quota: delete" 204 "$(status -X DELETE "$qbase/backups/${ids[1]}")"
expect "quota: the third new backup of the day" 201 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$qbase/backups/${ids[2]}")"
expect "quota: delete again" 204 "$(status -X DELETE "$qbase/backups/${ids[2]}")"
expect "quota: a fourth new backup in a day" 429 "$(status -X PUT -H "$oct" --data-binary @"$work/blob" "$qbase/backups/${ids[3]}")"
status -H 'Accept: application/octet-stream' "$qbase/backups/${ids[0]}${ids[1]}" >/dev/null
sleep 0.3
leaked=0
for i in "${ids[@]}" "$id"; do
    for k in $(seq 0 56); do
        if grep -qF "${i:$k:8}" "$work"/*.log; then leaked=1; echo "   log holds ${i:$k:8}"; break; fi
    done
done
[ "$leaked" = 0 ] && ok "no 8 consecutive digits of any backup ID in any server log" || fail "a backup ID reached a log"

# The Safe client against hostile servers: a negative Content-Length, headers that never end,
# a trickle with no end; and a chunked response (what a proxy may send) that restores.
cat >"$work/hostile.py" <<'PY'
import socket, sys, threading, time
mode, upstream = sys.argv[1], int(sys.argv[2])
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(8)
print(srv.getsockname()[1], flush=True)
def serve(c):
    try:
        req = b""
        while b"\r\n\r\n" not in req:
            req += c.recv(65536)
        if mode == "negative":
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nabc")
        elif mode == "endless":
            c.sendall(b"HTTP/1.1 200 OK\r\n")
            for _ in range(8 * 1024):
                c.sendall(b"X" * 1024)
        elif mode == "trickle":
            for b in b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 100:
                c.sendall(bytes([b])); time.sleep(0.5)
        elif mode == "chunked":
            up = socket.create_connection(("127.0.0.1", upstream))
            up.sendall(req.replace(b"Connection: close", b"Connection: close"))
            data = b""
            while True:
                d = up.recv(65536)
                if not d: break
                data += d
            head, body = data.split(b"\r\n\r\n", 1)
            status = head.split(b"\r\n")[0]
            out = status + b"\r\nTransfer-Encoding: chunked\r\n\r\n"
            for k in range(0, len(body), 7):
                part = body[k:k + 7]
                out += b"%x\r\n" % len(part) + part + b"\r\n"
            c.sendall(out + b"0\r\n\r\n")
    except OSError:
        pass
    finally:
        c.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
hostile() {  # hostile MODE: starts the fake server, sets $hport
    python3 "$work/hostile.py" "$1" "${client_port:-0}" >"$work/hostile-$1.port" &
    pids+=($!)
    for _ in $(seq 1 50); do [ -s "$work/hostile-$1.port" ] && break; sleep 0.1; done
    hport=$(head -1 "$work/hostile-$1.port")
}
client_port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/client.out")
set +e
for mode in negative endless trickle; do
    hostile "$mode"
    t_start=$(date +%s)
    "$bin" threema safe restore --server "http://127.0.0.1:$hport" --id ECHOECHO --password-file "$work/safe.pw" \
        --timeout 4 >"$work/hostile.out" 2>"$work/hostile.err"
    rc=$?
    took=$(( $(date +%s) - t_start ))
    if [ "$rc" = 1 ] && [ ! -s "$work/hostile.out" ] && [ "$took" -le 8 ]; then
        ok "safe restore against a '$mode' server exits 1 in ${took} s: $(head -c 120 "$work/hostile.err")"
    else
        fail "safe restore against a '$mode' server: exit $rc after ${took} s"
    fi
    "$bin" threema safe backup --server "http://127.0.0.1:$hport" --id ECHOECHO --password-file "$work/safe.pw" \
        --json-file "$work/doc.json" --timeout 4 >/dev/null 2>&1
    rc=$?
    [ "$rc" = 1 ] && ok "safe backup against a '$mode' server exits 1" || fail "safe backup against a '$mode' server: exit $rc"
done
hostile chunked
"$bin" threema safe restore --server "http://127.0.0.1:$hport" --id ECHOECHO --password-file "$work/safe.pw" >"$work/chunked.json"
expect "safe restore through a chunked response" 0 "$?"
cmp -s "$work/chunked.json" "$work/restored.json" && ok "the chunked restore returns the document" || fail "chunked restore differs"
"$bin" threema safe restore --server "http://u:p@127.0.0.1:$client_port" --id ECHOECHO --password-file "$work/safe.pw" >/dev/null 2>&1
expect "credentials in the URL (argv) are refused" 2 "$?"
"$bin" threema safe restore --server "http://127.0.0.1:$client_port" --id ECHOECHO --password-file "$work/safe.pw" extra >/dev/null 2>&1
expect "an extra positional argument is refused" 2 "$?"
set -e

# SIGTERM stops the main server cleanly with a summary line.
kill -TERM "${pids[0]}"
wait "${pids[0]}" 2>/dev/null || true
grep -q "stopped; .* requests served" "$work/main.log" && ok "SIGTERM stops the server with a summary" || fail "no clean stop on SIGTERM"

set +e
"$bin" threema safe-server --dir "$work" >/dev/null 2>&1; expect "missing --port exits" 2 "$?"
"$bin" threema safe-server --port 0 --dir "$work/none" >/dev/null 2>&1; expect "missing directory exits" 2 "$?"
"$bin" threema safe-server --port 0 --dir "$work" --rate x >/dev/null 2>&1; expect "bad --rate exits" 2 "$?"
"$bin" threema safe-server --port 0 --dir "$work" --password x >/dev/null 2>&1; expect "a password option exits" 2 "$?"
"$bin" threema nothing >/dev/null 2>&1; expect "unknown threema subcommand exits" 2 "$?"
set -e

if [ "$failures" -ne 0 ]; then
    echo "--- main server log (tail)"; tail -n 20 "$work/main.log"
    echo "safe-server-test: $failures failures"
    exit 1
fi
echo "safe-server-test: all checks passed"
