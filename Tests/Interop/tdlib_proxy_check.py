#!/usr/bin/env python3
"""TDLib (the prebuilt library of the `tdjson` PyPI package) against `rampart mtproto serve --secret HEX`.

TDLib's testProxy connects to the server as an MTProxy (fake-TLS for an ee secret, obfuscated2 with
padded intermediate for dd) and starts an auth-key handshake with DC 2. It cannot finish it: TDLib only
trusts Telegram's RSA keys, so testProxy ends with an error. What this checks is what the server saw,
from its log (the caller greps it): the ClientHello verified (ee), the obfuscated2 stream decoded, TDLib's
padded req_pq_multi parsed and answered. This script only drives TDLib and prints its answer.

usage: tdlib_proxy_check.py --port PORT --secret HEX
"""
import argparse
import json
import os
import sys
import time

import tdjson


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args()
    tdjson.td_execute(json.dumps({"@type": "setLogVerbosityLevel", "new_verbosity_level": 1}).encode())
    client = tdjson.td_create_client_id()
    proxy_type = {"@type": "proxyTypeMtproto", "secret": args.secret}
    # TDLib 1.8.5x takes a `proxy` object; older releases took server, port and type directly.
    request = {"@type": "testProxy", "proxy": {"@type": "proxy", "server": args.host, "port": args.port, "type": proxy_type},
               "server": args.host, "port": args.port, "type": proxy_type,
               "dc_id": 2, "timeout": args.timeout, "@extra": "rampart-probe"}
    tdjson.td_send(client, json.dumps(request).encode())
    deadline = time.time() + args.timeout + 30
    while time.time() < deadline:
        raw = tdjson.td_receive(1.0)
        if not raw:
            continue
        event = json.loads(raw)
        if event.get("@extra") == "rampart-probe":
            print(f"TDLib testProxy answered: {json.dumps(event)[:300]}", flush=True)
            return 0
    print("TDLib testProxy gave no answer", flush=True)
    return 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Leave without the interpreter's finalization: TDLib's threads are still running, and tearing the
    # library down under them aborted the process now and then (SIGABRT after the answer was printed,
    # seen in clean-clone CI runs without a controlling terminal), which failed the step.
    os._exit(code)
