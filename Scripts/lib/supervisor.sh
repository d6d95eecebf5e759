# The stack's process supervisor, sourced by Scripts/run: one spawn-fcgi
# process per pool slot (each its own unix socket) plus nginx, all children
# of this shell; a child that dies is started again.

declare -A SLOT_OF_PID=()
STOPPING=""
NGINX_PID=""

NGINX_ARGS=()

# nginx runs as a direct child (no wrapper shell), so its pid is $! and a
# signal to it reaches nginx itself.
set_nginx_args() {
    NGINX_ARGS=(-p "$GATEHOUSE_HOME/nginx" -e "$GATEHOUSE_HOME/log/nginx-error.log" -c "$GATEHOUSE_HOME/nginx/nginx.conf")
}

# Starts pool slot NAME-INDEX: spawn-fcgi binds the socket (owner-only, owned
# by nginx's worker user) and execs the responder with it on fd 0.
start_slot() {
    local name="$1" index="$2" socket="$GATEHOUSE_HOME/run/$1-$2.sock" pid owner=()
    rm -f "$socket"
    # spawn-fcgi refuses -U root; the socket is ours already in that case.
    [ "$WORKER_USER" != "$(id -un)" ] && owner=(-U "$WORKER_USER")
    spawn-fcgi -n -s "$socket" -M 0600 "${owner[@]}" -- "$BIN_DIR/$name" >>"$GATEHOUSE_HOME/log/$name.log" 2>&1 &
    pid=$!
    SLOT_OF_PID[$pid]="$name $index"
    echo "$pid" > "$GATEHOUSE_HOME/run/pids/$name-$index.pid"
}

start_nginx() {
    nginx "${NGINX_ARGS[@]}" -g "daemon off;" >>"$GATEHOUSE_HOME/log/nginx-error.log" 2>&1 &
    NGINX_PID=$!
    echo "$NGINX_PID" > "$GATEHOUSE_HOME/run/pids/nginx.pid"
}

start_stack() {
    set_nginx_args
    rm -f "$GATEHOUSE_HOME"/run/pids/*.pid
    local name i
    for name in "${ISSUER_RESPONDERS[@]}" "${API_RESPONDERS[@]}"; do
        for ((i = 0; i < GATEHOUSE_WORKERS; i++)); do start_slot "$name" "$i"; done
    done
    nginx "${NGINX_ARGS[@]}" -t -q 2>>"$GATEHOUSE_HOME/log/nginx-error.log" || { stop_stack; die "nginx rejected its config; see $GATEHOUSE_HOME/log/nginx-error.log"; }
    start_nginx
}

stop_stack() {
    STOPPING=1
    local pid
    [ -n "$NGINX_PID" ] && kill -TERM "$NGINX_PID" 2>/dev/null
    for pid in "${!SLOT_OF_PID[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    wait 2>/dev/null
    rm -f "$GATEHOUSE_HOME"/run/*.sock "$GATEHOUSE_HOME"/run/pids/*.pid
}

# Waits for any child to exit and restarts it; returns when stopping.
# Restarts of one slot are spaced by a second if it keeps dying at once,
# so a responder that cannot start does not spin the CPU.
supervise() {
    local pid slot status
    declare -A last_start=()
    while [ -z "$STOPPING" ]; do
        pid=""
        wait -n -p pid
        status=$?
        [ -n "$STOPPING" ] && break
        [ -z "$pid" ] && continue
        if [ "$pid" = "$NGINX_PID" ]; then
            log "nginx exited ($status); starting it again"
            sleep 1
            start_nginx
            continue
        fi
        slot="${SLOT_OF_PID[$pid]:-}"
        [ -z "$slot" ] && continue
        unset "SLOT_OF_PID[$pid]"
        log "responder ${slot% *}[${slot#* }] (pid $pid) exited ($status); restarting"
        if [ $((SECONDS - ${last_start[$slot]:-0})) -lt 2 ]; then sleep 1; fi
        last_start[$slot]=$SECONDS
        start_slot ${slot% *} ${slot#* }
    done
}
