#!/usr/bin/env bash
# `rampart mtproto serve --secret HEX` as an MTProxy against clients nobody here wrote (Docs/MTProto.md §6.6,
# §6.7), as CI runs it:
#   plain secret  Telethon's MTProxy abridged and intermediate transports (handshake, ping, rpc_error)
#                 and `rampart mtproto ping --secret`;
#   dd secret     Telethon's randomized intermediate (padded intermediate: the server's padding must be
#                 0-3 bytes, Telethon strips only length % 4), the Swift client, and TDLib's testProxy;
#   ee secret     the Swift fake-TLS client and TDLib's testProxy (fake-TLS).
# TDLib (the `tdjson` wheel) trusts only Telegram's RSA keys, so its handshake stops at resPQ: the check
# is that it got that far (its error names our key's fingerprint, i.e. it read resPQ through the proxy
# layers) and that the server logged the verified ClientHello (ee) and the answered req_pq.
# Usage: Scripts/mtproxy-test.sh PATH/TO/rampart PATH/TO/python   (a Python with telethon and tdjson)
set -euo pipefail
bin=${1:?usage: mtproxy-test.sh PATH/TO/rampart PATH/TO/python}
py=${2:?usage: mtproxy-test.sh PATH/TO/rampart PATH/TO/python}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
server_pid=""
stop() { [ -n "$server_pid" ] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }; server_pid=""; }
trap 'stop; rm -rf "$work"' EXIT
fail() { echo "mtproxy test: $1"; echo "--- server log (tail)"; tail -n 30 "$work/serve.log" || true; exit 1; }

. Scripts/serve-lib.sh
start() {
    start_mtproto_serve "$bin" "$work/serve.out" "$work/serve.log" --rsa-key "$work/server.pem" --secret "$1" ||
        fail "the server did not start"
    "$bin" rsa public --key "$work/server.pem" >"$work/server.pub"
}

tdlib() {
    local out
    out=$("$py" Tests/Interop/tdlib_proxy_check.py --port "$port" --secret "$1")
    echo "  $out"
    echo "$out" | grep -q "Unknown Main fingerprints" || fail "TDLib did not read resPQ through the proxy ($2)"
    sleep 0.5
    grep -q "req_pq answered" "$work/serve.log" || fail "no req_pq from TDLib was answered ($2)"
}

plain=00112233445566778899aabbccddeeff
dd=dd$plain
ee=ee${plain}$(printf 'example.com' | od -An -tx1 | tr -d ' \n')

echo "plain secret:"
start "$plain"
"$py" Tests/Interop/telethon_interop.py --port "$port" --public-key "$work/server.pub" --secret "$plain"
"$bin" mtproto ping --port "$port" --rsa-key "$work/server.pub" --transport obfuscated2 --secret "$plain"
stop

echo "dd secret:"
start "$dd"
"$py" Tests/Interop/telethon_interop.py --port "$port" --public-key "$work/server.pub" --secret "$dd"
"$bin" mtproto ping --port "$port" --rsa-key "$work/server.pub" --transport obfuscated2 --secret "$dd"
tdlib "$dd" dd
# A client without the secret is refused with a log line.
"$bin" mtproto ping --port "$port" --rsa-key "$work/server.pub" --transport intermediate >/dev/null 2>&1 && fail "a client without the secret got through"
stop

echo "ee secret (fake-TLS):"
start "$ee"
"$bin" mtproto ping --port "$port" --rsa-key "$work/server.pub" --transport obfuscated2 --secret "$ee"
tdlib "$ee" ee
grep -q "fake-TLS ClientHello verified" "$work/serve.log" || fail "no verified fake-TLS ClientHello logged"
stop
echo "mtproxy test: passed"
