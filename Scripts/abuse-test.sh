#!/usr/bin/env bash
# Abuse test for the loopback MTProto test server (`rampart mtproto serve`), issue 11.
#
#   Scripts/abuse-test.sh [PATH-TO-RELEASE-RAMPART]
#
# Builds nothing: it takes the path of a release-built `rampart` (default: the one in
# `swift build -c release --show-bin-path`). It starts the server on a free 127.0.0.1 port under
# `ulimit -n 512` (so the connection cap derived from RLIMIT_NOFILE is 512 - 32 = 480) with the
# default limits otherwise, then runs each attack for a bounded time, from Python 3 (stdlib only)
# clients on loopback:
#
#   idle        connections up to the cap (480), held idle for 5 s
#   slowloris   250 connections trickling a frame header one byte a second for 8 s
#   garbage     as many garbage connections (64-1000 random bytes each) as fit in 8 s
#   oversized   frame headers above the frame limit in every framing
#   noread      3 clients pipelining requests (req_pq_multi) that never read their answers, each
#               replaced as soon as the server closes it, for 8 s; every one must be closed within 5 s
#   fdflood     cap + 500 connections held for 6 s: beyond the cap, the least recently active are shed
#   handshake   a req_DH_params flood (each one an RSA private operation; legacy RSA padding, pq
#               factored in Python, 4 processes) from 127.0.0.2 for 10 s: at most 40 + 20/s get
#               through, the rest get -429; the legitimate ping comes from 127.0.0.1
#   memory      200 connections each holding a ~1 MiB partial frame (200 MiB offered)
#   emfile      a second server under `ulimit -n 96` with --max-connections 1000 (above its
#               descriptor limit), flooded with 300 connections: accept() hits EMFILE, the server
#               sheds instead of spinning (its CPU time over 3 s of the hold must stay under 1 s)
#   keys        a third server with --max-keys 16: 24 handshakes, 16 keys held at the end
#
# During each attack and after it a legitimate `rampart mtproto ping` (from 127.0.0.1) must
# succeed, and the server's VmRSS (sampled every 0.2 s from /proc/PID/status) must stay under
# RSS_BOUND_KB. The bound, 160 MiB, is the server's worst case with the default limits plus a
# margin: ~20 MiB at rest (runtime, RSA key, code), the 32 MiB buffer budget counted twice (a
# growing Swift array may have up to twice its count in capacity), 1024 auth keys with up to 4
# sessions at ~9 kB each,
# 1024 connections at a few kB, and malloc slack. Measured: ~82 MiB peak (memory attack), ~21 MiB
# otherwise; without the limits the memory attack alone takes the server to ~230 MiB, and 300
# such connections to ~330 MB.
#
# Exits nonzero on any failure; the servers and attack clients are always killed. About 1.5 min
# on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-"$(swift build -c release --show-bin-path)/rampart"}
[ -x "$bin" ] || { echo "abuse-test: no rampart binary at $bin (build with: swift build -c release)"; exit 2; }
command -v python3 >/dev/null || { echo "abuse-test: python3 is required"; exit 2; }

RSS_BOUND_KB=$((160 * 1024))
SERVER_NOFILE=512
hard_nofile=$(ulimit -Hn)
if [ "$hard_nofile" != unlimited ] && [ "$hard_nofile" -lt "$SERVER_NOFILE" ]; then SERVER_NOFILE=$hard_nofile; fi
CAP=$((SERVER_NOFILE - 32))

work=$(mktemp -d)
pids_to_kill=()
failures=0
t_start=$(date +%s)

cleanup() {
    for p in "${pids_to_kill[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids_to_kill[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "abuse-test: unexpected failure at line $LINENO"' ERR
trap 'exit 130' INT TERM

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_server NAME NOFILE ARGS... — sets port, server_pid, log (the server's stderr).
start_server() {
    local name=$1 nofile=$2
    shift 2
    port=$(free_port)
    log="$work/$name.log"
    bash -c 'ulimit -n "$1"; shift; exec "$@"' _ "$nofile" \
        "$bin" mtproto serve --port "$port" --rsa-key "$work/server.pem" "$@" >"$work/$name.out" 2>"$log" &
    server_pid=$!
    pids_to_kill+=("$server_pid")
    for _ in $(seq 1 300); do grep -q "^listening on" "$work/$name.out" 2>/dev/null && break; sleep 0.1; done
    grep -q "^listening on 127.0.0.1:$port" "$work/$name.out" || { echo "abuse-test: the $name server did not start"; cat "$log"; exit 1; }
    [ -f "$work/server.pub" ] || "$bin" rsa public --key "$work/server.pem" >"$work/server.pub"
    # VmRSS sampler: one line per 0.2 s while the server lives.
    ( while [ -r "/proc/$server_pid/status" ]; do
          awk '/^VmRSS:/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || true
          sleep 0.2
      done >"$work/$name.rss" ) &
    pids_to_kill+=("$!")
}

stop_server() {  # stop_server PID
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# ping LABEL [PORT]: one legitimate client, with a deadline.
ping_ok() {
    local label=$1 p=${2:-$port} t0 t1
    t0=$(date +%s%N)
    if timeout 30 "$bin" mtproto ping --port "$p" --rsa-key "$work/server.pub" --transport intermediate >"$work/ping.out" 2>&1; then
        t1=$(date +%s%N)
        echo "  ping $label: ok ($(( (t1 - t0) / 1000000 )) ms)"
    else
        fail "ping $label failed: $(tr '\n' ' ' <"$work/ping.out")"
    fi
}

server_alive() { kill -0 "$1" 2>/dev/null || fail "the server (pid $1) died"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
max_rss() { sort -n "$1" | tail -n 1; }
check_rss() {  # check_rss NAME LABEL
    local m
    m=$(max_rss "$work/$1.rss")
    echo "  server RSS peak so far: $((m / 1024)) MiB (bound $((RSS_BOUND_KB / 1024)) MiB)"
    [ "$m" -le "$RSS_BOUND_KB" ] || fail "$2: server RSS $m kB above the bound of $RSS_BOUND_KB kB"
}

# ---------------------------------------------------------------------------------------------
# The attack clients.
cat >"$work/attack.py" <<'PY'
import hashlib, math, multiprocessing, os, random, resource, select, socket, struct, sys, time

def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ValueError, OSError):
        pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]

def connect(port, source="127.0.0.1", timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if source != "127.0.0.1":
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s

def ready(path):
    if path:
        with open(path, "w") as f:
            f.write("ready\n")

def closed_by_server(s):
    """True when the server has closed (EOF or reset); never blocks."""
    try:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            return False
        return s.recv(65536, socket.MSG_PEEK) == b""
    except OSError:
        return True

def hold(socks, seconds):
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(0.2)
    return sum(1 for s in socks if closed_by_server(s))

# --- framing and TL -------------------------------------------------------------------------
TAG = b"\xee\xee\xee\xee"           # intermediate
def frame(payload):
    return struct.pack("<I", len(payload)) + payload

_msg_id = [int(time.time() * 2**32) & ~3]
def unencrypted(body):
    _msg_id[0] += 4
    return struct.pack("<QqI", 0, _msg_id[0], len(body)) + body

def tl_bytes(b):
    if len(b) < 254:
        out = bytes([len(b)]) + b
    else:
        out = b"\xfe" + struct.pack("<I", len(b))[:3] + b
    return out + b"\0" * (-len(out) % 4)

def read_tl_bytes(b, o):
    n = b[o]
    if n < 254:
        data, o = b[o + 1:o + 1 + n], o + 1 + n
        o += -(1 + n) % 4
    else:
        n = int.from_bytes(b[o + 1:o + 4], "little")
        data, o = b[o + 4:o + 4 + n], o + 4 + n
        o += -n % 4
    return data, o

def req_pq_multi(nonce):
    return unencrypted(struct.pack("<I", 0xbe7e8ef1) + nonce)

def read_packet(s, deadline):
    """One intermediate packet, or None on close/timeout."""
    buf = b""
    while len(buf) < 4:
        s.settimeout(max(0.01, deadline - time.time()))
        try:
            c = s.recv(4 - len(buf))
        except OSError:
            return None
        if not c:
            return None
        buf += c
    n = struct.unpack("<I", buf)[0]
    out = b""
    while len(out) < n:
        s.settimeout(max(0.01, deadline - time.time()))
        try:
            c = s.recv(n - len(out))
        except OSError:
            return None
        if not c:
            return None
        out += c
    return out

def pollard_brent(n):
    if n % 2 == 0:
        return 2
    while True:
        y, c, m = random.randrange(1, n), random.randrange(1, n), 128
        g = r = q = 1
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(m, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += m
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g

def der_int(b, o):
    assert b[o] == 0x02
    n, o = der_len(b, o + 1)
    return int.from_bytes(b[o:o + n], "big"), o + n

def der_len(b, o):
    n = b[o]
    if n < 0x80:
        return n, o + 1
    k = n & 0x7f
    return int.from_bytes(b[o + 1:o + 1 + k], "big"), o + 1 + k

def load_public_key(path):
    import base64
    text = open(path).read()
    lines = text.splitlines()
    begin = lines.index("-----BEGIN RSA PUBLIC KEY-----")
    end = lines.index("-----END RSA PUBLIC KEY-----", begin)
    body = "".join(lines[begin + 1:end])
    der = base64.b64decode(body)
    assert der[0] == 0x30
    _, o = der_len(der, 1)
    n, o = der_int(der, o)
    e, o = der_int(der, o)
    return n, e

# --- attacks --------------------------------------------------------------------------------
def attack_idle(port, count, seconds, ready_path):
    raise_nofile()
    socks = []
    for _ in range(count):
        try:
            socks.append(connect(port))
        except OSError as e:
            print(f"idle: connect failed after {len(socks)}: {e}")
            break
    ready(ready_path)
    closed = hold(socks, seconds)
    print(f"idle: {len(socks)} connections held {seconds} s, {closed} closed by the server")
    return 0

def attack_slowloris(port, count, seconds, ready_path):
    raise_nofile()
    socks = [connect(port) for _ in range(count)]
    # An intermediate tag and a frame header for 1000 bytes, one byte a second.
    trickle = TAG + struct.pack("<I", 1000) + b"\0" * 1000
    ready(ready_path)
    end, i = time.time() + seconds, 0
    while time.time() < end:
        for s in socks:
            try:
                s.send(trickle[i:i + 1])
            except OSError:
                pass
        i += 1
        time.sleep(1.0)
    closed = sum(1 for s in socks if closed_by_server(s))
    print(f"slowloris: {count} connections trickled {i} bytes each, {closed} closed by the server")
    return 0

def garbage_worker(args):
    port, end = args
    n = unanswered = 0
    while time.time() < end:
        s = None
        try:
            s = connect(port, timeout=5)
            # At least 64 bytes: fewer may be the start of an obfuscated2 header, which the server
            # rightly waits for.
            s.sendall(os.urandom(random.randrange(64, 1000)))
            s.settimeout(2)
            while s.recv(4096):
                pass
        except socket.timeout:
            unanswered += 1   # a prefix of a valid frame: the server waits for the rest
        except OSError:
            pass
        finally:
            if s is not None:
                s.close()
        n += 1
    return n, unanswered

def attack_garbage(port, seconds, ready_path):
    end = time.time() + seconds
    ready(ready_path)
    with multiprocessing.Pool(4) as pool:
        results = pool.map(garbage_worker, [(port, end)] * 4)
    n, waiting = sum(r[0] for r in results), sum(r[1] for r in results)
    print(f"garbage: {n} connections with random bytes in {seconds} s; {n - waiting} closed by the server, "
          f"{waiting} still waiting for the rest of a frame after 2 s (closed by the client)")
    return 0 if n >= 300 and waiting * 20 <= n else 1

def attack_oversized(port, max_frame, ready_path):
    big = max_frame + 64  # beyond the padding a padded frame may add
    headers = {
        "abridged": b"\xef\x7f" + (big // 4).to_bytes(3, "little"),
        "intermediate": TAG + struct.pack("<I", big),
        "padded-intermediate": b"\xdd\xdd\xdd\xdd" + struct.pack("<I", big),
        "full": struct.pack("<II", big + 12, 0),
        "intermediate-2^32-1": TAG + b"\xff\xff\xff\xff",
    }
    ready(ready_path)
    bad = set()
    for name, h in headers.items():
        for _ in range(20):
            s = connect(port)
            s.sendall(h + b"\0" * 1024)
            s.settimeout(5)
            try:
                while s.recv(4096):
                    pass
            except socket.timeout:
                bad.add(name)
            except OSError:
                pass
            s.close()
    print(f"oversized: {len(headers) * 20} oversized headers in {len(headers)} framings, framings not closed within 5 s: {sorted(bad) or 'none'}")
    return 0 if not bad else 1

class NoReadClient:
    """A connection that pipelines req_pq_multi frames (keeping frame boundaries across partial
    sends) and never reads."""
    BATCH = b"".join(frame(req_pq_multi(os.urandom(16))) for _ in range(200))

    def __init__(self, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(5)
        self.sock.connect(("127.0.0.1", port))
        self.sock.setblocking(False)
        self.opened = time.time()
        self.pending = memoryview(TAG + self.BATCH)
        self.sent = 0

    def pump(self):
        """Sends what the socket takes; False once the connection is gone."""
        try:
            n = self.sock.send(self.pending)
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
        self.sent += n
        self.pending = self.pending[n:]
        if not self.pending:
            self.pending = memoryview(self.BATCH)
        return True

def attack_noread(port, clients, seconds, ready_path):
    """Clients that never read; each one the server closes is replaced at once."""
    conns = [NoReadClient(port) for _ in range(clients)]
    lifetimes, total = [], 0
    t0 = time.time()
    signalled = False
    while time.time() < t0 + seconds:
        if not signalled and time.time() - t0 > 1.0:
            ready(ready_path)
            signalled = True
        _, writable, _ = select.select([], [c.sock for c in conns], [], 0.2)
        for i, c in enumerate(conns):
            alive = c.pump() if c.sock in writable else True
            if not alive or closed_by_server(c.sock):
                lifetimes.append(time.time() - c.opened)
                total += c.sent
                c.sock.close()
                conns[i] = NoReadClient(port)
    oldest = max(time.time() - c.opened for c in conns)
    total += sum(c.sent for c in conns)
    ready(ready_path)
    longest = max(lifetimes) if lifetimes else float("nan")
    print(f"noread: {clients} clients pipelined {total // 1024} KiB of req_pq_multi without reading for {seconds} s; "
          f"{len(lifetimes)} connections closed by the server after at most {longest:.1f} s; "
          f"open ones are at most {oldest:.1f} s old")
    return 0 if len(lifetimes) >= clients and longest <= 5 and oldest <= 5 else 1

def attack_fdflood(port, count, seconds, ready_path):
    limit = raise_nofile()
    count = min(count, limit - 50)
    socks, failed = [], 0
    for _ in range(count):
        try:
            socks.append(connect(port, timeout=2))
        except OSError:
            failed += 1
    ready(ready_path)
    closed = hold(socks, seconds)
    print(f"fdflood: {len(socks)} connections opened ({failed} failed), {closed} shed by the server while held")
    return 0

def handshake_worker(args):
    port, pubkey, source, end = args
    n, e = load_public_key(pubkey)
    ok = refused = other = 0
    while time.time() < end:
        try:
            s = connect(port, source=source, timeout=5)
            nonce = os.urandom(16)
            s.sendall(TAG + frame(req_pq_multi(nonce)))
            p = read_packet(s, time.time() + 5)
            if p is None or len(p) < 24:
                other += 1; s.close(); continue
            body = p[20:]
            server_nonce = body[20:36]
            pq_bytes, o = read_tl_bytes(body, 36)
            fingerprint = body[o + 8:o + 16]
            pq = int.from_bytes(pq_bytes, "big")
            a = pollard_brent(pq)
            pp, qq = sorted((a, pq // a))
            pb, qb = pp.to_bytes(4, "big"), qq.to_bytes(4, "big")
            inner = (struct.pack("<I", 0x83c95aec) + tl_bytes(pq_bytes) + tl_bytes(pb) + tl_bytes(qb)
                     + nonce + server_nonce + os.urandom(32))
            block = hashlib.sha1(inner).digest() + inner + os.urandom(235 - len(inner))
            enc = pow(int.from_bytes(block, "big"), e, n).to_bytes(256, "big")
            req = (struct.pack("<I", 0xd712e4be) + nonce + server_nonce + tl_bytes(pb) + tl_bytes(qb)
                   + fingerprint + tl_bytes(enc))
            s.sendall(frame(unencrypted(req)))
            p = read_packet(s, time.time() + 5)
            if p is not None and len(p) >= 24 and struct.unpack("<I", p[20:24])[0] == 0xd0e8075c:
                ok += 1
            elif p is not None and len(p) == 4 and struct.unpack("<i", p)[0] == -429:
                refused += 1
            else:
                other += 1
            s.close()
        except OSError:
            other += 1
    return ok, refused, other

def attack_handshake(port, pubkey, source, seconds, workers, ready_path):
    end = time.time() + seconds
    ready(ready_path)
    with multiprocessing.Pool(workers) as pool:
        results = pool.map(handshake_worker, [(port, pubkey, source, end)] * workers)
    ok, refused, other = (sum(r[i] for r in results) for i in range(3))
    print(f"handshake: from {source} for {seconds} s: {ok} req_DH_params answered (RSA operations), "
          f"{refused} refused with -429, {other} other outcomes; {ok / seconds:.1f} RSA operations/s forced")
    return 0

def attack_memory(port, count, size, seconds, ready_path):
    raise_nofile()
    socks, closed_early = [], 0
    chunk = b"\0" * 65536
    for _ in range(count):
        s = connect(port)
        try:
            s.sendall(TAG + struct.pack("<I", size))
            left = size - 4096
            while left > 0:
                s.sendall(chunk[:min(left, 65536)])
                left -= 65536
        except OSError:
            closed_early += 1
        socks.append(s)
    ready(ready_path)
    closed = hold(socks, seconds)
    print(f"memory: {count} connections each sent {(size - 4096) // 1024} KiB of a {size // 1024} KiB frame "
          f"({count * (size - 4096) // (1 << 20)} MiB offered); {closed} closed by the server")
    return 0

def main():
    cmd, port = sys.argv[1], int(sys.argv[2])
    a = sys.argv[3:]
    if cmd == "idle": return attack_idle(port, int(a[0]), float(a[1]), a[2])
    if cmd == "slowloris": return attack_slowloris(port, int(a[0]), float(a[1]), a[2])
    if cmd == "garbage": return attack_garbage(port, float(a[0]), a[1])
    if cmd == "oversized": return attack_oversized(port, int(a[0]), a[1])
    if cmd == "noread": return attack_noread(port, int(a[0]), float(a[1]), a[2])
    if cmd == "fdflood": return attack_fdflood(port, int(a[0]), float(a[1]), a[2])
    if cmd == "handshake": return attack_handshake(port, a[0], a[1], float(a[2]), int(a[3]), a[4])
    if cmd == "memory": return attack_memory(port, int(a[0]), int(a[1]), float(a[2]), a[3])
    print("unknown attack " + cmd)
    return 2

if __name__ == "__main__":
    sys.exit(main())
PY

# run_attack NAME ARGS...: starts the attack, pings once it is in place, waits for it, pings again.
run_attack() {
    local name=$1 rc=0 apid
    shift
    echo "== $name"
    rm -f "$work/ready"
    local a0
    a0=$(date +%s)
    python3 "$work/attack.py" "$name" "$port" "$@" "$work/ready" >"$work/attack.out" 2>&1 &
    apid=$!
    pids_to_kill+=("$apid")
    for _ in $(seq 1 300); do [ -f "$work/ready" ] && break; kill -0 "$apid" 2>/dev/null || break; sleep 0.1; done
    sleep 0.5
    ping_ok "during $name"
    wait "$apid" || rc=$?
    sed 's/^/  /' "$work/attack.out"
    [ "$rc" = 0 ] || fail "$name: the attack's own check failed (exit $rc)"
    ping_ok "after $name"
    server_alive "$server_pid"
    check_rss main "$name"
    echo "  ($(( $(date +%s) - a0 )) s)"
}

# ---------------------------------------------------------------------------------------------
# The output budget of 256 KiB per connection (the default is 2 MiB, room for a 1 MiB file part
# twice over) makes the noread clients hit the limit within the attack's 5 s.
start_server main "$SERVER_NOFILE" --max-output-bytes 262144
main_pid=$server_pid
grep "limits:" "$log" | sed 's/^\[[0-9]*\] /  /' || true
grep -q "max-connections $CAP (RLIMIT_NOFILE $SERVER_NOFILE)" "$log" || fail "the connection cap is not RLIMIT_NOFILE - 32"
ping_ok "before any attack"

run_attack idle "$CAP" 5
grep -q "shed: connection limit of $CAP reached" "$log" || fail "idle: no connection was shed at the cap"

run_attack slowloris 250 8

run_attack garbage 8
grep -q "transport error\|bad unencrypted message\|closing" "$log" || fail "garbage: no log line for garbage"

run_attack oversized 1048576
grep -q "over the transport's length limit" "$log" || fail "oversized: the oversized frame was not logged"

run_attack noread 3 8
grep -q "output buffer over 262144 bytes: the peer is not reading" "$log" || fail "noread: no output-buffer close logged"

c0=$(cpu_ticks "$main_pid")
run_attack fdflood $((CAP + 500)) 6
c1=$(cpu_ticks "$main_pid")
echo "  server CPU during fdflood: $(( (c1 - c0) * 1000 / $(getconf CLK_TCK) )) ms"

run_attack handshake "$work/server.pub" 127.0.0.2 10 4
ok=$(sed -n 's/.* \([0-9]*\) req_DH_params answered.*/\1/p' "$work/attack.out")
refused=$(sed -n 's/.* \([0-9]*\) refused with -429.*/\1/p' "$work/attack.out")
# 20 per second for 10 s after a burst of 40, plus one second of slack for the attack's ramp.
[ -n "$ok" ] && [ "$ok" -le $((40 + 20 * 11)) ] || fail "handshake: $ok RSA operations let through from one address (limit 40 + 20/s)"
[ -n "$refused" ] && [ "$refused" -gt 0 ] \
    || fail "handshake: the flood was never refused (the attack did not reach 24 attempts/s, or the limit is not applied)"
grep -q "RSA rate limit exceeded from 127.0.0.2" "$log" || fail "handshake: no rate-limit log line"

run_attack memory 200 1048576 6
grep -q "shed: .* bytes buffered over the budget" "$log" || fail "memory: the buffer budget never shed a connection"

stop_server "$main_pid"
grep "limits hit:" "$log" | sed 's/^\[[0-9]*\] /  /' || true
echo "  main server: peak RSS $(( $(max_rss "$work/main.rss") / 1024 )) MiB"

# EMFILE: a server whose connection cap is above its descriptor limit.
echo "== emfile"
start_server emfile 96 --max-connections 1000
emfile_pid=$server_pid
grep -q "warning: --max-connections 1000 is above RLIMIT_NOFILE 96" "$log" || fail "emfile: no warning for a cap above the descriptor limit"
rm -f "$work/ready"
python3 "$work/attack.py" fdflood "$port" 300 6 "$work/ready" >"$work/attack.out" 2>&1 &
apid=$!
pids_to_kill+=("$apid")
for _ in $(seq 1 300); do [ -f "$work/ready" ] && break; kill -0 "$apid" 2>/dev/null || break; sleep 0.1; done
c0=$(cpu_ticks "$emfile_pid")
sleep 1
ping_ok "during emfile"
sleep 2
c1=$(cpu_ticks "$emfile_pid")
wait "$apid" || fail "emfile: the flood failed"
sed 's/^/  /' "$work/attack.out"
ping_ok "after emfile"
cpu_ms=$(( (c1 - c0) * 1000 / $(getconf CLK_TCK) ))
echo "  server CPU over 3 s of the hold: $cpu_ms ms"
[ "$cpu_ms" -le 1000 ] || fail "emfile: the server used $cpu_ms ms of CPU in 3 s at the descriptor limit (spinning?)"
grep -q "accept: Too many open files" "$log" || fail "emfile: accept() never hit EMFILE (test ineffective)"
grep -q "shed: out of file descriptors" "$log" || fail "emfile: nothing was shed at the descriptor limit"
server_alive "$emfile_pid"
check_rss emfile emfile
stop_server "$emfile_pid"

# Keys: the LRU bound holds across many handshakes.
echo "== keys"
start_server keys 1024 --max-keys 16
keys_pid=$server_pid
for i in $(seq 1 24); do
    timeout 30 "$bin" mtproto ping --port "$port" --rsa-key "$work/server.pub" --transport abridged >/dev/null 2>&1 \
        || fail "keys: ping $i failed"
done
stop_server "$keys_pid"
summary=$(grep "limits hit:" "$log" || true)
echo "  ${summary#*] }"
case "$summary" in *"8 auth keys forgotten (16 held)"*) ;; *) fail "keys: expected 8 keys forgotten and 16 held" ;; esac

echo "abuse test: $(( $(date +%s) - t_start )) s, $failures failure(s)"
if [ "$failures" != 0 ]; then exit 1; fi
