#!/usr/bin/env bash
# No `rampart` command traps on any input: hostile command lines and standard input against a built
# binary, checking exit statuses (never 132/133/134 or any other death by signal; 2 for bad usage, 1 for
# a failed check) and that a failure writes nothing on standard output.
#
#   Scripts/cli-hostile-test.sh PATH-TO-RAMPART
#
# Builds nothing: it takes the path of a built `rampart` (debug or release). Checks, by finding:
#
#   size     secret-chat encode of a 16 MiB text (exit 2: input too large, not a precondition trap);
#            seal, open and decode over their protocol limits; a dh line over 64 KiB; a media frame
#            over 64 KiB
#   overflow secret-chat file-decrypt --size near Int.max (exit 1), blake2b --length, the serve and
#            client-test timers (--idle-timeout, --rsa-per-second, --salt-period, --duration) and a
#            threema serve rate of 1e300 (exit 2)
#   sender   threema message open needs --from: a sealed envelope opens with the right --from; one
#            byte of the header's sender changed is refused (exit 1, nothing on stdout, "does not
#            match"); no --from is bad usage
#   extra    a bogus extra word after every command `rampart --help` and `rampart threema --help`
#            list (and their subcommands) is bad usage ("unexpected argument"); the lists are read
#            from the binary, so a new command without an entry here fails the test
#   files    a directory as --in, --file-key, --key-file, --gck-file, --password-file, --backup-file,
#            --key, --identities, --rsa-key or standard input, and as --out, --key-out or --trace:
#            exit 2 ("cannot read" / "cannot write"), never taken for an empty file; stdout on a full
#            device: exit 1
#   numbers  every numeric option of every command with -1, abc, 2^63 - 1 and 10^20 (rates also with
#            1e300, nan, inf): no trap, no hang; a refusal says why on stderr and writes nothing on
#            stdout (servers that accept a value are stopped with SIGTERM once listening)
#   words    every message on stderr is a sentence: no Swift type name (`RampartThreema.EnvelopeFault`),
#            no enum case with its payload (`invalidPasswordLength(allowed: …)`)
#
# Exits nonzero on any failure. About ten seconds with a debug binary, most of it the numbers loop.
set -euo pipefail

bin=${1:-}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "usage: $0 PATH-TO-RAMPART"; exit 2; }
command -v python3 >/dev/null || { echo "cli-hostile-test: python3 is required"; exit 2; }
command -v timeout >/dev/null || { echo "cli-hostile-test: timeout (coreutils) is required"; exit 2; }
# A trap still exits 132/133 (SIGILL/SIGTRAP), without the slow symbolicated backtrace.
export SWIFT_BACKTRACE=enable=no

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

# run STDIN ARGS...: runs rampart with STDIN (a file) and a time limit; sets $rc, with standard output
# in $work/out and standard error in $work/err.
run() {
    local input=$1; shift
    set +e
    timeout 60 "$bin" "$@" <"$input" >"$work/out" 2>"$work/err"
    rc=$?
    set -e
}

# verdict NAME [report]: judges the last run by the rules (not an expected status): no death by a
# signal, no timeout, exit 0, 1 or 2; a failure says why on stderr and writes nothing on stdout, unless
# `report` (the commands whose stdout is a report of steps, FAIL lines included: chat, client-test,
# vectors, and dh, which prints g_a before it reads). Prints only a failure; returns 1 then.
verdict() {
    local what=$1 mode=${2:-strict}
    if [ "$rc" -ge 128 ]; then fail "$what: died with exit $rc: $(head -c 300 "$work/err" | tr '\n' ' ')"; return 1; fi
    if [ "$rc" = 124 ]; then fail "$what: did not finish"; return 1; fi
    if [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 2 ]; then fail "$what: exit $rc"; return 1; fi
    if [ "$rc" != 0 ] && [ "$mode" = strict ] && ! [ -s "$work/err" ]; then fail "$what: exit $rc without a message on stderr"; return 1; fi
    if [ "$rc" != 0 ] && [ "$mode" = strict ] && [ -s "$work/out" ]; then
        fail "$what: exit $rc with $(wc -c <"$work/out") bytes on stdout"; return 1
    fi
    # Errors are sentences for people, never Swift type names or enum cases with their payloads.
    if grep -qE 'Rampart[A-Za-z]*\.[A-Z]|ClosedRange\(|\b[a-z][A-Za-z]+\([a-zA-Z]+: |\b(Fault|Error)\.[a-z]' "$work/err"; then
        fail "$what: stderr shows a Swift type name: $(head -c 300 "$work/err" | tr '\n' ' ')"; return 1
    fi
    return 0
}

# check NAME STATUS [STDERR-TEXT] -- ARGS...: runs ARGS (stdin: $in, default /dev/null) and expects
# exactly STATUS, no trap, nothing on stdout when STATUS is not 0, and STDERR-TEXT (if given) in the
# message.
check() {
    local name=$1 want=$2 text=""
    shift 2
    if [ "$1" != "--" ]; then text=$1; shift; fi
    shift
    run "${in:-/dev/null}" "$@"
    verdict "$name" || return 0
    if [ "$rc" != "$want" ]; then fail "$name: expected exit $want, got $rc: $(head -c 300 "$work/err" | tr '\n' ' ')"; return 0; fi
    if [ -n "$text" ] && ! grep -qF -- "$text" "$work/err"; then
        fail "$name: stderr lacks '$text': $(head -c 300 "$work/err" | tr '\n' ' ')"; return 0
    fi
    ok "$name (exit $rc)"
}

hex() { od -An -tx1 | tr -d ' \n'; }

# Inputs, all made here.
mkdir "$work/dir"
in=/dev/null
head -c 64 /dev/urandom >"$work/filekey"
head -c 256 /dev/urandom >"$work/chatkey"
k32=$(head -c 32 /dev/urandom | hex)
gck=$(head -c 32 /dev/urandom | hex)
pcmk=$(head -c 32 /dev/urandom | hex)
printf 'correct horse battery' >"$work/password"
serverkey=$("$bin" x25519 --scalar "$(head -c 32 /dev/urandom | hex)")
keyhash=$(head -c 36 /dev/urandom | hex)
python3 - "$work" <<'EOF'
import sys
w = sys.argv[1]
with open(w + "/text16m", "wb") as f: f.write(b"a" * (16 << 20))            # a text TL cannot hold
with open(w + "/text16m-100", "wb") as f: f.write(b"a" * ((16 << 20) - 100))  # fits one message
with open(w + "/over16m", "wb") as f: f.write(b"\0" * ((16 << 20) + 1))
with open(w + "/overmsg", "wb") as f: f.write(b"\0" * ((16 << 20) + 2048))
with open(w + "/longline", "wb") as f: f.write(b"a" * 70000 + b" 1\n")
with open(w + "/bigframe", "wb") as f: f.write(b"\0" * 70000)
EOF

echo "== [${SECONDS} s] size: secret-chat inputs over the protocol's limits"
in=$work/text16m check "encode --kind text of 16 MiB (TL holds 2^24 - 1)" 2 "input too large" -- \
    mtproto secret-chat encode --kind text --in-seq-no 0 --out-seq-no 1
run "$work/text16m-100" mtproto secret-chat encode --kind text --in-seq-no 0 --out-seq-no 1
verdict "encode of a text just under 16 MiB" && expect "encode of a text just under 16 MiB: exit 0, at most 16 MiB of TL" \
    "0 yes" "$rc $([ "$(wc -c <"$work/out")" -le $((16 << 20)) ] && echo yes || echo no)"
in=$work/over16m check "seal of 16 MiB + 1 byte of TL" 2 "input too large" -- \
    mtproto secret-chat seal --key-file "$work/chatkey" --sender creator
in=$work/over16m check "decode of 16 MiB + 1 byte" 2 "input too large" -- mtproto secret-chat decode
in=$work/overmsg check "open of a message larger than 16 MiB of TL can make" 2 "input too large" -- \
    mtproto secret-chat open --key-file "$work/chatkey" --sender creator
run "$work/longline" mtproto secret-chat dh --role creator --key-out "$work/dhkey"
verdict "dh creator with a 70 KB line" report && expect "dh creator with a 70 KB line: exit 2, no key written" \
    "2 no" "$rc $([ -e "$work/dhkey" ] && echo yes || echo no)"
in=$work/bigframe check "call frame-open of 70000 bytes (frames are at most 65536)" 2 "input too large" -- \
    threema call frame-open --codec opus --gck "$gck" --pcmk "$pcmk"

echo "== [${SECONDS} s] overflow: sizes, counts and timers near Int.max"
for size in 9223372036854775807 9223372036854775800 9223372036854775792; do
    check "file-decrypt --size $size" 1 "padded length" -- \
        mtproto secret-chat file-decrypt --file-key "$work/filekey" --size "$size"
done
printf 'abc' >"$work/three"
"$bin" mtproto secret-chat file-encrypt --file-key "$work/filekey" <"$work/three" >"$work/three.enc"
in=$work/three.enc check "file-decrypt of a real file with --size 3" 0 -- \
    mtproto secret-chat file-decrypt --file-key "$work/filekey" --size 3
expect "file-decrypt gives the file back" abc "$(cat "$work/out")"
in=$work/three.enc check "file-decrypt of a real file with --size 9223372036854775807" 1 -- \
    mtproto secret-chat file-decrypt --file-key "$work/filekey" --size 9223372036854775807
check "hash blake2b --length 2^63 - 1" 2 -- hash blake2b --length 9223372036854775807
port=$((20000 + RANDOM % 30000))
check "mtproto serve --idle-timeout 2^63 - 1" 2 "idle-timeout" -- mtproto serve --port "$port" --idle-timeout 9223372036854775807
check "mtproto serve --rsa-per-second 2^63 - 1" 2 "rsa-per-second" -- mtproto serve --port "$port" --rsa-per-second 9223372036854775807
check "mtproto serve --salt-period 2^63 - 1" 2 "salt-period" -- mtproto serve --port "$port" --salt-period 9223372036854775807
check "threema serve --handshake-rate 1e300" 2 "handshake-rate" -- threema serve --port 0 --handshake-rate 1e300
check "threema client-test --duration 2^63 - 1" 2 "duration" -- \
    threema client-test --port 1 --server-key "$serverkey" --duration 9223372036854775807

echo "== [${SECONDS} s] sender: threema message open checks the header's sender against --from"
alice=$(head -c 32 /dev/urandom | hex); bob=$(head -c 32 /dev/urandom | hex)
alice_pub=$("$bin" x25519 --scalar "$alice"); bob_pub=$("$bin" x25519 --scalar "$bob")
printf 'meet at noon' | "$bin" threema message seal --secret-key "$alice" --public-key "$bob_pub" \
    --from ALICE001 --to BOB00001 >"$work/env"
python3 - "$work/env" "$work/env-relabeled" <<'EOF'
import sys
env = bytearray(open(sys.argv[1], "rb").read())
assert env[0:8] == b"ALICE001"
env[7] = ord("2")     # the sender field (bytes 0..8) now names ALICE002; nothing else changes
open(sys.argv[2], "wb").write(env)
EOF
in=$work/env check "message open with the right --from" 0 -- \
    threema message open --secret-key "$bob" --public-key "$alice_pub" --from ALICE001
expect "message open: the body" "meet at noon" "$(cat "$work/out")"
grep -q "sender=ALICE001 " "$work/err" && ok "message open: sender=ALICE001 on stderr" || fail "message open: no sender=ALICE001 on stderr"
in=$work/env-relabeled check "message open of an envelope whose sender byte was changed" 1 "does not match" -- \
    threema message open --secret-key "$bob" --public-key "$alice_pub" --from ALICE001
in=$work/env check "message open with another --from" 1 "does not match" -- \
    threema message open --secret-key "$bob" --public-key "$alice_pub" --from ALICE002
in=$work/env check "message open without --from" 2 "missing --from" -- \
    threema message open --secret-key "$bob" --public-key "$alice_pub"
in=$work/env check "message open with a seal option" 2 "not an option of open" -- \
    threema message open --secret-key "$bob" --public-key "$alice_pub" --from ALICE001 --to BOB00001

echo "== [${SECONDS} s] words: refusals of bad data are sentences"
printf 'not a message' >"$work/garbage"
k1=$(printf '%064d' 1); k2=$(printf '%064d' 2)
in=$work/garbage check "message open of garbage" 1 "not a Threema message: 13 bytes" -- \
    threema message open --secret-key "$k1" --public-key "$k2" --from ECHOECHO
in=$work/garbage check "safe decrypt of garbage" 1 "not a valid Threema Safe backup" -- threema safe decrypt --key "$k1"
printf 'a password\n' >"$work/pw"
in=$work/garbage check "id-backup decode of garbage" 1 "not a Threema ID backup" -- threema id-backup decode --password-file "$work/pw"
check "3mid of garbage" 1 "not a Threema contact code" -- threema 3mid --parse 3mid:x

echo "== [${SECONDS} s] extra: a bogus extra word is bad usage for every command"
check "threema 3mid --parse PAYLOAD extra" 2 "unexpected argument extra" -- threema 3mid --parse "3mid:ECHOECHO,$k32" extra
check "threema safe encrypt --key K extra" 2 "unexpected argument extra" -- threema safe encrypt --key "$k32" extra
check "threema safe decrypt --key K extra" 2 "unexpected argument extra" -- threema safe decrypt --key "$k32" extra
check "threema safe derive --id ID extra" 2 "unexpected argument extra" -- threema safe derive --id ECHOECHO --password-file "$work/password" extra
# Each command with what makes it complete enough to reach its option parser; `bogus-extra` is appended.
extra_cases=(
    "hash sha256" "hmac sha256 --key 00" "kdf pbkdf2" "kdf scrypt" "aes cbc-encrypt" "aes gcm-seal" "secretbox seal"
    "stream xsalsa20" "x25519 --scalar $k32" "box seal" "prime check --hex 07" "rsa public" "rsa keygen"
    "mtproto serve" "mtproto ping" "mtproto secret-chat visualize" "mtproto secret-chat chat" "mtproto secret-chat dh-config"
    "mtproto secret-chat dh" "mtproto secret-chat seal" "mtproto secret-chat open" "mtproto secret-chat encode"
    "mtproto secret-chat decode" "mtproto secret-chat file-fingerprint" "mtproto secret-chat file-encrypt"
    "mtproto secret-chat file-decrypt" "threema message seal" "threema message open" "threema blob encrypt"
    "threema blob decrypt" "threema hash email a@example.com" "threema hash phone 41791234567" "threema 3mid --id ECHOECHO"
    "threema safe derive" "threema safe encrypt" "threema safe decrypt" "threema safe backup" "threema safe restore"
    "threema id-backup encode" "threema id-backup decode" "threema safe-server" "threema ibex demo" "threema call-id"
    "threema call frame-seal" "threema call frame-open" "threema serve" "threema client-test" "info"
)
covered=" $(printf '%s\n' "${extra_cases[@]}" | awk '{print $1; if ($1 == "threema") print "threema:" $2}' | sort -u | tr '\n' ' ') vectors "
for c in $("$bin" --help | sed -n 's/^  \([a-z0-9-]*\) .*/\1/p' | sort -u); do
    case "$covered" in *" $c "*) ;; *) fail "rampart --help lists '$c', which has no case here" ;; esac
done
for c in $("$bin" threema --help | sed -n 's/^  \([a-z0-9-]*\) .*/\1/p' | sort -u); do
    case "$covered" in *" threema:$c "*) ;; *) fail "rampart threema --help lists '$c', which has no case here" ;; esac
done
n=0
for c in "${extra_cases[@]}"; do
    # shellcheck disable=SC2086
    run /dev/null $c bogus-extra
    verdict "$c bogus-extra" || continue
    if [ "$rc" != 2 ] || ! grep -q "bogus-extra" "$work/err"; then
        fail "$c bogus-extra: expected exit 2 naming the word, got $rc: $(head -c 200 "$work/err" | tr '\n' ' ')"; continue
    fi
    n=$((n + 1))
done
ok "$n of ${#extra_cases[@]} commands refuse an extra word (exit 2, 'unexpected argument')"
run /dev/null vectors bogus-extra
verdict "vectors bogus-extra (a path that does not exist)" report && expect "vectors with a missing file" 1 "$rc"

echo "== [${SECONDS} s] files: a directory or an unwritable path is an error, never an empty file"
d=$work/dir
check "call frame-open --in DIR" 2 "cannot read" -- threema call frame-open --codec opus --gck "$gck" --pcmk "$pcmk" --in "$d"
check "call frame-seal --gck-file DIR" 2 "cannot read" -- threema call frame-seal --codec opus --gck-file "$d" --pcmk "$pcmk" --mfsn 1
check "secret-chat file-fingerprint --file-key DIR" 2 "cannot read" -- mtproto secret-chat file-fingerprint --file-key "$d"
check "secret-chat seal --key-file DIR" 2 "cannot read" -- mtproto secret-chat seal --key-file "$d" --sender creator
check "safe derive --password-file DIR" 2 "cannot read" -- threema safe derive --id ECHOECHO --password-file "$d"
check "id-backup decode --backup-file DIR" 2 "cannot read" -- threema id-backup decode --backup-file "$d" --password-file "$work/password"
check "rsa public --key DIR" 2 "cannot read" -- rsa public --key "$d"
check "threema serve --key DIR" 2 "cannot read" -- threema serve --port 0 --key "$d"
check "threema serve --identities DIR" 2 "cannot read" -- threema serve --port 0 --identities "$d"
check "mtproto serve --rsa-key DIR" 2 "cannot read" -- mtproto serve --port "$port" --rsa-key "$d"
in=$d check "hash sha256 with a directory on stdin" 2 "cannot read" -- hash sha256
in=$d check "secret-chat decode with a directory on stdin" 2 "cannot read" -- mtproto secret-chat decode
check "rsa keygen --out DIR" 2 "cannot write" -- rsa keygen --out "$d"
check "secret-chat visualize --out DIR" 2 "cannot write" -- mtproto secret-chat visualize --key-hash "$keyhash" --out "$d"
check "threema serve --trace DIR" 2 "cannot open" -- threema serve --port 0 --trace "$d"
p=$("$bin" mtproto secret-chat dh-config | sed -n 's/^p: //p')
python3 -c "import secrets; p = int('$p', 16); print(format(pow(3, secrets.randbelow(p - 3) + 2, p), '0512x'))" >"$work/ga"
in=$work/ga check "secret-chat dh --role acceptor --key-out DIR (nothing on stdout)" 2 "cannot write" -- \
    mtproto secret-chat dh --role acceptor --key-out "$d"
in=$work/ga check "secret-chat dh --role acceptor with a writable --key-out" 0 -- \
    mtproto secret-chat dh --role acceptor --key-out "$work/acceptor.key"
expect "the acceptor's key file" 256 "$(wc -c <"$work/acceptor.key")"
set +e
printf abc | "$bin" hash sha256 >/dev/full 2>"$work/err"; rc=$?
set -e
expect "hash sha256 with stdout on a full device" 1 "$rc"

echo "== [${SECONDS} s] numbers: every numeric option with hostile values"
ints=(-1 abc 9223372036854775807 99999999999999999999)
rates=(-1 abc 1e300 nan inf 9223372036854775807 1e300:1e300 1:nan)
values=("${ints[@]}")
safedir=$work/safe
mkdir "$safedir"
# server NAME ARGS...: a server either refuses the arguments (verdict) or starts listening; then it is
# stopped with SIGTERM and must exit cleanly.
server() {
    local what=$1; shift
    set +e
    "$bin" "$@" </dev/null >"$work/out" 2>"$work/err" &
    local pid=$! started=0
    pids+=("$pid")
    for _ in $(seq 1 1500); do
        if grep -q "^listening on" "$work/out" 2>/dev/null; then started=1; break; fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.01
    done
    if [ "$started" = 1 ]; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 1000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
        kill -KILL "$pid" 2>/dev/null   # a server that ignores SIGTERM: exit 137, a failure below
    fi
    wait "$pid"; rc=$?
    set -e
    if [ "$started" = 1 ] && [ "$rc" != 0 ]; then fail "$what: listening, then exit $rc on SIGTERM"; return 1; fi
    verdict "$what"
}
# numeric MODE OPTION ARGS...: ARGS --OPTION VALUE for every hostile value; MODE is strict, report
# (stdout is a report of steps) or server.
count=0
numeric() {
    local mode=$1 opt=$2; shift 2
    for v in "${values[@]}"; do
        count=$((count + 1))
        if [ "$mode" = server ]; then
            server "$* --$opt $v" "$@" "--$opt" "$v" || true
        else
            run /dev/null "$@" "--$opt" "$v"
            verdict "$* --$opt $v" "$mode" || true
        fi
    done
}
before=$failures
numeric strict length hash blake2b
numeric strict length kdf pbkdf2 --hash sha256 --password-hex 70 --salt-hex 73 --iterations 1
for v in -1 abc 0 99999999999999999999; do   # a huge iteration count is valid (and runs for ages)
    run /dev/null kdf pbkdf2 --hash sha256 --password-hex 70 --salt-hex 73 --iterations "$v" --length 16
    verdict "kdf pbkdf2 --iterations $v" || true
done
for o in n r p length; do
    args=(--n 16 --r 1 --p 1 --length 16)
    for i in 0 2 4 6; do [ "${args[$i]}" = "--$o" ] && unset "args[$i]" "args[$((i + 1))]"; done
    numeric strict "$o" kdf scrypt --password-hex 70 --salt-hex 73 "${args[@]}"
done
numeric server port mtproto serve
for o in max-connections max-frame-bytes max-output-bytes max-buffer-bytes max-keys key-idle-seconds \
         rsa-per-second rsa-global-per-second idle-timeout salt-period; do
    numeric server "$o" mtproto serve --port "$port"
done
numeric strict port mtproto ping --rsa-key "$work/missing.pem" --transport abridged
numeric strict dc mtproto ping --port 1 --rsa-key "$work/missing.pem" --transport abridged
numeric strict pfs mtproto ping --port 1 --rsa-key "$work/missing.pem" --transport abridged
numeric strict cell mtproto secret-chat visualize --key-hash "$keyhash" --out "$work/v.svg"
for o in port messages burst file-bytes; do
    numeric report "$o" mtproto secret-chat chat --port 1 --rsa-key "$work/missing.pem"
done
numeric report peer mtproto secret-chat chat --port 1 --rsa-key "$work/missing.pem" --peer-access-hash 1
numeric report peer-access-hash mtproto secret-chat chat --port 1 --rsa-key "$work/missing.pem" --peer 2
for o in in-seq-no out-seq-no random-id layer; do
    args=(--in-seq-no 0 --out-seq-no 1)
    [ "$o" = in-seq-no ] && args=(--out-seq-no 1)
    [ "$o" = out-seq-no ] && args=(--in-seq-no 0)
    numeric strict "$o" mtproto secret-chat encode --kind noop "${args[@]}"
done
numeric strict value mtproto secret-chat encode --kind notify-layer --in-seq-no 0 --out-seq-no 1
numeric strict start mtproto secret-chat encode --kind resend --in-seq-no 0 --out-seq-no 1 --end 3
numeric strict end mtproto secret-chat encode --kind resend --in-seq-no 0 --out-seq-no 1 --start 1
numeric strict exchange-id mtproto secret-chat encode --kind abort-key --in-seq-no 0 --out-seq-no 1
numeric strict key-fingerprint mtproto secret-chat encode --kind commit-key --exchange-id 1 --in-seq-no 0 --out-seq-no 1
numeric strict size mtproto secret-chat file-decrypt --file-key "$work/filekey"
for o in created-at flags; do
    numeric strict "$o" threema message seal --secret-key "$alice" --public-key "$bob_pub" --from ALICE001 --to BOB00001
done
numeric strict expiry threema 3mid --id ECHOECHO --public-key "$k32"
numeric strict protocol-version threema call-id --creator ABCD1234 --group-id 0102030405060708 --gck "$gck" --sfu-url x
for o in mfsn epoch ratchet; do
    args=(--mfsn 1); [ "$o" = mfsn ] && args=()
    numeric strict "$o" threema call frame-seal --codec opus --gck "$gck" --pcmk "$pcmk" "${args[@]}"
done
numeric strict seed threema ibex demo
for o in queue-limit queue-bytes sender-queue-limit sender-queue-bytes address-queue-bytes total-queue-bytes \
         message-lifetime ack-window max-identities handshake-timeout idle-timeout max-connections; do
    numeric server "$o" threema serve --port 0
done
numeric server port threema serve
for o in max-backup-bytes retention-days max-connections max-connections-per-address idle-timeout \
         request-timeout new-backups-per-day max-backups max-stored-bytes; do
    numeric server "$o" threema safe-server --port 0 --dir "$safedir"
done
values=("${rates[@]}")   # R[:B] rates: doubles
for o in registration-rate handshake-rate global-handshake-rate; do numeric server "$o" threema serve --port 0; done
for o in rate global-rate auth-failure-rate; do numeric server "$o" threema safe-server --port 0 --dir "$safedir"; done
values=("${ints[@]}")
numeric server port threema safe-server --dir "$safedir"
for o in pairs messages timeout duration; do
    numeric report "$o" threema client-test --port 1 --server-key "$serverkey"
done
numeric report port threema client-test --server-key "$serverkey"
for o in receivers count size; do
    numeric report "$o" threema client-test --port 1 --server-key "$serverkey" --probe queue-flood
done
numeric report idle threema client-test --port 1 --server-key "$serverkey" --probe idle
[ "$failures" = "$before" ] && ok "$count hostile numeric values: no trap, no hang, every refusal explained"

echo
if [ "$failures" != 0 ]; then echo "cli-hostile-test: $failures failure(s)"; exit 1; fi
echo "cli-hostile-test: all checks passed"
