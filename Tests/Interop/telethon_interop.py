#!/usr/bin/env python3
"""Interop check of `rampart mtproto serve` against Telethon, a widely used Python MTProto client.

For each transport Telethon offers (TCP full, abridged, intermediate, obfuscated, and HTTP: one
POST /api per packet, which the server answers one response per request) this connects
Telethon's own MTProtoSender to the Rampart test server, lets it run the whole auth-key handshake
(Telethon sends req_pq_multi and p_q_inner_data with the legacy SHA-1 RSA padding), sends
PingRequest and checks the matching Pong, then sends a request the server does not implement
(help.getNearestDc) and checks the rpc_error (400 METHOD_NOT_SUPPORTED).

With --secret HEX the server runs as an MTProxy (`rampart mtproto serve --secret HEX`) and Telethon
connects through its MTProxy transports instead: mtproxy-abridged and mtproxy-intermediate with a plain
secret, mtproxy-randomized (padded intermediate, whose padding toward the client must be 0-3 bytes:
Telethon strips only length % 4) with a dd secret.

usage: telethon_interop.py --port PORT --public-key FILE [--host 127.0.0.1] [--transports a,b] [--secret HEX]
Exit status 0 when every transport passed.
"""
import argparse
import asyncio
import inspect
import logging
import random
import re
import sys

from telethon.crypto import rsa
from telethon.errors import RPCError
from telethon.network import (ConnectionHttp, ConnectionTcpAbridged, ConnectionTcpFull, ConnectionTcpIntermediate,
                              ConnectionTcpObfuscated, MTProtoSender)
from telethon.network.connection.http import HttpPacketCodec
from telethon.network.connection.tcpmtproxy import (ConnectionTcpMTProxyAbridged, ConnectionTcpMTProxyIntermediate,
                                                    ConnectionTcpMTProxyRandomizedIntermediate)
from telethon.tl.functions import PingRequest
from telethon.tl.functions.help import GetNearestDcRequest
from telethon.tl.types import Pong


class HttpPacketCodecFixed(HttpPacketCodec):
    """Telethon's HTTP reader with its one bug mended. Telethon (1.x up to at least 1.45) checks each
    header line with `line[-1] != b'\\n'`, which compares an int with bytes and is always true, so its
    ConnectionHttp raises IncompleteReadError on the first response line of any server. This is the
    same reader with `line[-1:]`; the request side, the MTProtoSender and everything else stay
    Telethon's own. Used only while the installed Telethon still has the bug."""

    async def read_packet(self, reader):
        while True:
            line = await reader.readline()
            if not line or line[-1:] != b"\n":
                raise asyncio.IncompleteReadError(line, None)
            if line.lower().startswith(b"content-length: "):
                await reader.readexactly(2)
                return await reader.readexactly(int(line[16:-2]))


class ConnectionHttpFixed(ConnectionHttp):
    packet_codec = HttpPacketCodecFixed


def http_connection():
    if "line[-1] != b'\\n'" in inspect.getsource(HttpPacketCodec.read_packet):
        print("note: Telethon's HttpPacketCodec.read_packet compares line[-1] (an int) with b'\\n' and fails on "
              "every response; its HTTP connection runs with that one line mended", flush=True)
        return ConnectionHttpFixed
    return ConnectionHttp


TRANSPORTS = {
    "full": ConnectionTcpFull,
    "abridged": ConnectionTcpAbridged,
    "intermediate": ConnectionTcpIntermediate,
    "obfuscated": ConnectionTcpObfuscated,
    "http": http_connection(),
}
MTPROXY_TRANSPORTS = {
    "mtproxy-abridged": ConnectionTcpMTProxyAbridged,
    "mtproxy-intermediate": ConnectionTcpMTProxyIntermediate,
    "mtproxy-randomized": ConnectionTcpMTProxyRandomizedIntermediate,
}


class Loggers(dict):
    """Telethon wants loggers[module name]."""
    def __missing__(self, key):
        return logging.getLogger("telethon-interop").getChild(key.split(".")[-1])


async def check(name, host, port, secret=None):
    sender = MTProtoSender(None, loggers=Loggers(), retries=1, delay=0.2, auto_reconnect=False,
                           connect_timeout=10)
    if secret is None:
        connection = TRANSPORTS[name](host, port, 2, loggers=Loggers())
    else:
        connection = MTPROXY_TRANSPORTS[name](host, port, 2, loggers=Loggers(), proxy=(host, port, secret))
    try:
        await asyncio.wait_for(sender.connect(connection), 60)
        if sender.auth_key is None or sender.auth_key.key is None:
            raise AssertionError("no auth key after connect")
        ping_id = random.getrandbits(63)
        pong = await asyncio.wait_for(sender.send(PingRequest(ping_id=ping_id)), 30)
        if not isinstance(pong, Pong) or pong.ping_id != ping_id:
            raise AssertionError(f"expected Pong({ping_id}), got {pong!r}")
        try:
            result = await asyncio.wait_for(sender.send(GetNearestDcRequest()), 30)
            raise AssertionError(f"expected an RPC error, got {result!r}")
        except RPCError as e:
            if e.code != 400 or "METHOD_NOT_SUPPORTED" not in str(e.message):
                raise AssertionError(f"expected 400 METHOD_NOT_SUPPORTED, got {e.code} {e.message}")
        print(f"PASS telethon {name}: handshake (auth_key_id {sender.auth_key.key_id & (2**64 - 1):016x}), "
              f"ping/pong {ping_id:x}, rpc_error 400 METHOD_NOT_SUPPORTED", flush=True)
        return True
    except Exception as e:  # report and go on with the next transport
        print(f"FAIL telethon {name}: {type(e).__name__}: {e}", flush=True)
        return False
    finally:
        try:
            await asyncio.wait_for(sender.disconnect(), 10)
        except Exception:
            pass


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--public-key", required=True, help="PEM file with the server's PKCS#1 public key")
    ap.add_argument("--transports", default=None)
    ap.add_argument("--secret", default=None, help="MTProxy secret (hex) the server runs with")
    args = ap.parse_args()
    if args.transports is None:
        if args.secret is None:
            args.transports = ",".join(TRANSPORTS)
        elif args.secret.lower().startswith("dd"):
            args.transports = "mtproxy-randomized"
        else:
            args.transports = "mtproxy-abridged,mtproxy-intermediate"
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    text = open(args.public_key).read()
    m = re.search(r"-----BEGIN RSA PUBLIC KEY-----.*?-----END RSA PUBLIC KEY-----", text, re.S)
    if not m:
        print("no BEGIN RSA PUBLIC KEY block in " + args.public_key)
        return 2
    rsa.add_key(m.group(0), old=False)
    ok = True
    for name in args.transports.split(","):
        ok &= await check(name, args.host, args.port, args.secret)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
