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
#   limits  (--max-connections 2 --request-timeout 1 --idle-timeout 2): a third connection gets 503;
#           a request trickling past the timeout and an idle connection are closed (and logged);
#           curl is still served; SIGTERM stops the main server with a summary line
#   usage   bad options exit 2
#   client  the Swift client (rampart threema safe backup/restore) round trip, curl's copy decrypted
#
# Exits nonzero on any mismatch; the servers are always stopped. A few seconds.
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
grep -q "malformedRequestLine; closing" "$work/main.log" && ok "garbage is logged" || fail "no log line for the garbage"

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
start limits --max-connections 2 --request-timeout 1 --idle-timeout 2 --rate 0
if python3 - "$port" <<'PY'
import socket, subprocess, sys, time
port = int(sys.argv[1])
slow = socket.create_connection(("127.0.0.1", port), timeout=10)
slow.sendall(b"GET /config HTTP/1.1\r\n")       # never finished
idle = socket.create_connection(("127.0.0.1", port), timeout=10)
time.sleep(0.3)
third = socket.create_connection(("127.0.0.1", port), timeout=10)
data = third.recv(4096)
assert data.startswith(b"HTTP/1.1 503 "), data[:60]
print("ok: a connection over --max-connections gets 503")
third.close()
def closed_within(s, seconds):
    s.settimeout(seconds)
    try:
        return s.recv(4096) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
assert closed_within(slow, 4), "the slow client was not closed"
print("ok: a request trickling past --request-timeout is closed")
assert closed_within(idle, 4), "the idle connection was not closed"
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
