# Sourced by the scripts that start `rampart mtproto serve` on loopback (.ci/run, mtproxy-test.sh,
# secret-chat-relay-test.sh). Not a script of its own.

# free_port: prints a TCP port on 127.0.0.1 that nothing was bound to a moment ago.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# start_mtproto_serve BIN OUT LOG ARGS...
# Starts `BIN mtproto serve --port P ARGS...` on a free port (stdout to OUT, stderr to LOG), sets `port`
# and `server_pid`, and returns once OUT holds `listening on 127.0.0.1:P`. Waiting is bounded by the
# server, not by a guess at how loaded the machine is: up to 120 s while the process lives. A server whose
# bind failed (the probed port taken in the moment before) is started again on another port, three tries
# in all; any other early exit is a failure. On failure it prints what the server left (exit status,
# stdout, log) and returns 1.
start_mtproto_serve() {
    local bin=$1 out=$2 log=$3 try i status
    shift 3
    for try in 1 2 3; do
        port=$(free_port)
        "$bin" mtproto serve --port "$port" "$@" >"$out" 2>"$log" &
        server_pid=$!
        status=""
        for ((i = 0; i < 1200; i++)); do
            grep -q "^listening on 127.0.0.1:$port\$" "$out" 2>/dev/null && return 0
            if ! kill -0 "$server_pid" 2>/dev/null; then
                status=0
                wait "$server_pid" 2>/dev/null || status=$?
                break
            fi
            sleep 0.1
        done
        if [ -z "$status" ]; then
            echo "mtproto serve (pid $server_pid, port $port) is not listening after 120 s"
            kill "$server_pid" 2>/dev/null || true
            wait "$server_pid" 2>/dev/null || true
        else
            echo "mtproto serve (port $port, try $try) exited with status $status before listening"
            [ "$status" -gt 128 ] && echo "  (signal $((status - 128)): $(kill -l $((status - 128)) 2>/dev/null || echo '?'))"
        fi
        echo "--- its stdout"; cat "$out" 2>/dev/null || true
        echo "--- its log"; tail -n 40 "$log" 2>/dev/null || true
        { [ -n "$status" ] && grep -q "bind 127.0.0.1:$port" "$log" 2>/dev/null; } || break
        echo "(the port was taken: trying another)"
    done
    server_pid=""
    return 1
}
