#!/usr/bin/env bash
# Two Swift secret-chat clients through `rampart mtproto serve`'s relay (Docs/MTProto.md §7.9), as CI runs
# them: the acceptor logs in and waits, the creator opens a chat with it; they exchange 300 texts (re-keys
# after about 100 and 200 messages), the relay drops the 55th text (the receiver sees the gap, asks for a
# resend and gets it), the creator sends a 1 MiB encrypted file that the acceptor downloads, decrypts and
# confirms, and the creator discards the chat. Both sides must end with the same key fingerprint and key
# hash, two re-keys, one gap and one resend between them, and the same file digest.
# Usage: Scripts/secret-chat-relay-test.sh PATH/TO/rampart
set -euo pipefail
bin=${1:?usage: secret-chat-relay-test.sh PATH/TO/rampart}
work=$(mktemp -d)
. "$(dirname "$0")/serve-lib.sh"
acceptor_pid=""
cleanup() {
    [ -n "$acceptor_pid" ] && kill "$acceptor_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
    wait 2>/dev/null || true
}
fail() {
    echo "secret-chat relay test: $1"
    for f in creator.out acceptor.out; do echo "--- $f"; cat "$work/$f" 2>/dev/null || true; done
    echo "--- server log (tail)"; tail -n 30 "$work/serve.log" || true
    cleanup
    exit 1
}
server_pid=""
start_mtproto_serve "$bin" "$work/serve.out" "$work/serve.log" --rsa-key "$work/server.pem" --drop-secret-message 55 ||
    fail "the test server did not start"
"$bin" rsa public --key "$work/server.pem" >"$work/server.pub"

"$bin" mtproto secret-chat chat --port "$port" --rsa-key "$work/server.pub" --svg "$work/acceptor.svg" >"$work/acceptor.out" 2>&1 &
acceptor_pid=$!
for _ in $(seq 1 100); do grep -q "^user " "$work/acceptor.out" 2>/dev/null && break; sleep 0.2; done
read -r _ peer _ hash < <(grep "^user " "$work/acceptor.out") || fail "the acceptor did not log in"
t0=$SECONDS
"$bin" mtproto secret-chat chat --port "$port" --rsa-key "$work/server.pub" --peer "$peer" --peer-access-hash "$hash" \
    --svg "$work/creator.svg" >"$work/creator.out" 2>&1 || fail "the creator failed"
wait "$acceptor_pid" || fail "the acceptor failed"
acceptor_pid=""

for side in creator acceptor; do
    grep -q "^secret chat ok$" "$work/$side.out" || fail "$side did not finish"
    grep -q "^rekeys: 2$" "$work/$side.out" || fail "$side did not re-key twice"
    grep -q "^texts sent: 15[01], received: 151$" "$work/$side.out" || fail "$side counts are off"
done
for line in key_fingerprint key-hash "file sha256"; do
    a=$(grep "^$line: " "$work/creator.out"); b=$(grep "^$line: " "$work/acceptor.out")
    [ -n "$a" ] && [ "$a" = "$b" ] || fail "the two sides differ in $line"
done
cmp -s "$work/creator.svg" "$work/acceptor.svg" || fail "the two key images differ"
gaps=$(cat "$work/creator.out" "$work/acceptor.out" | sed -n 's/^gaps seen: \([0-9]*\), messages resent: \([0-9]*\)$/\1 \2/p' \
       | awk '{g += $1; r += $2} END {print g, r}')
[ "$gaps" = "1 1" ] || fail "expected one gap and one resend, got $gaps"
grep -q "message #55 .* dropped" "$work/serve.log" || fail "the relay did not drop message 55"
echo "secret-chat relay: $(grep '^key_fingerprint' "$work/creator.out"), 300 texts, 2 re-keys, gap recovered, 1 MiB file, $((SECONDS - t0)) s"
cleanup
rm -rf "$work"
