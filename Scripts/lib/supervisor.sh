# The stack's process supervisor, sourced by Scripts/run: one spawn-fcgi
# process per pool slot (each its own unix socket), nginx and the mail
# sender, all children of this shell; a child that dies is started again.

declare -A SLOT_OF_PID=()
STOPPING=""
NGINX_PID=""
SWEEPER_PID=""
MAILER_PID=""
# The mail sender's pid file: run/pids/gatehouse-mailer-0.pid, named like a
# pool slot (program-index), one per stack.
MAILER_SLOT="gatehouse-mailer-0"

NGINX_ARGS=()

# nginx runs as a direct child (no wrapper shell), so its pid is $! and a
# signal to it reaches nginx itself.
set_nginx_args() {
    NGINX_ARGS=(-p "$GATEHOUSE_HOME/nginx" -e "$GATEHOUSE_HOME/log/nginx-error.log" -c "$GATEHOUSE_HOME/nginx/nginx.conf")
}

# Starts pool slot NAME-INDEX, after DELAY seconds if given: spawn-fcgi binds
# the socket (as root: gatehouse:gatehouse-web 0660, Scripts/lib/accounts.sh),
# becomes the responders' user and execs the responder with the socket on
# fd 0. The delay runs in the child, so a responder that keeps crashing
# never holds up the restart of any other.
start_slot() {
    local name="$1" index="$2" delay="${3:-0}" socket="$GATEHOUSE_HOME/run/$1-$2.sock" pid owner=()
    mapfile -t owner < <(spawn_fcgi_owner_options)
    (
        [ "$delay" = 0 ] || sleep "$delay"
        rm -f "$socket"
        # log/ is root's alone, so the responder (another user) cannot open
        # the audit log itself: it inherits it as fd 3, opened for appending.
        # GATEHOUSE_SLOT names its counter file (metrics/NAME-INDEX.metrics).
        exec 3>>"$GATEHOUSE_HOME/log/audit.log"
        GATEHOUSE_SLOT="$name-$index" GATEHOUSE_AUDIT_FD=3 \
            exec spawn-fcgi -n -s "$socket" "${owner[@]}" -- "$BIN_DIR/$name" >>"$GATEHOUSE_HOME/log/$name.log" 2>&1
    ) &
    pid=$!
    SLOT_OF_PID[$pid]="$name $index"
    write_pid_file "$name-$index" "$pid"
}

# Readers (tests, operators' scripts) may open a pid file at any moment; a
# rename is atomic, so they see the old pid or the new one, never an empty file.
write_pid_file() {
    local file="$GATEHOUSE_HOME/run/pids/$1.pid"
    echo "$2" > "$file.tmp" && mv -f "$file.tmp" "$file"
}

# The mail sender (gatehouse-mailer): one per stack, as the responders' user
# (setpriv execs, so $! is the sender itself and SIGTERM reaches it). It
# inherits the audit log as fd 3 like a slot; its log is log/mailer.log,
# its counters metrics/mailer-0.metrics. A restart within 2 s of the last
# start waits a second (DELAY), as a slot's does.
start_mailer() {
    local delay="${1:-0}" switch=()
    if [ "$(id -u)" -eq 0 ] && [ "$RESPONDER_USER" != root ]; then
        switch=(setpriv --reuid="$RESPONDER_USER" --regid="$RESPONDER_GROUP" --init-groups --)
    fi
    (
        [ "$delay" = 0 ] || sleep "$delay"
        exec 3>>"$GATEHOUSE_HOME/log/audit.log"
        GATEHOUSE_SLOT=mailer-0 GATEHOUSE_AUDIT_FD=3 \
            exec "${switch[@]}" "$BIN_DIR/gatehouse-mailer" >>"$GATEHOUSE_HOME/log/mailer.log" 2>&1
    ) &
    MAILER_PID=$!
    MAILER_STARTED=$SECONDS
    write_pid_file "$MAILER_SLOT" "$MAILER_PID"
}

start_nginx() {
    nginx "${NGINX_ARGS[@]}" -g "daemon off;" >>"$GATEHOUSE_HOME/log/nginx-error.log" 2>&1 &
    NGINX_PID=$!
    write_pid_file nginx "$NGINX_PID"
}

start_stack() {
    set_nginx_args
    rm -f "$GATEHOUSE_HOME"/run/pids/*.pid "$GATEHOUSE_HOME"/run/pids/*.tmp
    local name i
    for name in "${ISSUER_RESPONDERS[@]}" "${API_RESPONDERS[@]}"; do
        for ((i = 0; i < GATEHOUSE_WORKERS; i++)); do start_slot "$name" "$i"; done
    done
    start_mailer
    nginx "${NGINX_ARGS[@]}" -t -q 2>>"$GATEHOUSE_HOME/log/nginx-error.log" || { stop_stack; die "nginx rejected its config; see $GATEHOUSE_HOME/log/nginx-error.log"; }
    start_nginx
}

stop_stack() {
    STOPPING=1
    local pid
    [ -n "$NGINX_PID" ] && kill -TERM "$NGINX_PID" 2>/dev/null
    [ -n "$SWEEPER_PID" ] && kill -TERM "$SWEEPER_PID" 2>/dev/null
    # The sender ends after the message in hand (within SMTPTransport's 30 s);
    # one waiting out its restart delay is a subshell with a sleep child.
    [ -n "$MAILER_PID" ] && { pkill -TERM -P "$MAILER_PID" 2>/dev/null; kill -TERM "$MAILER_PID" 2>/dev/null; }
    # A slot waiting out its restart delay is a subshell with a sleep child.
    for pid in "${!SLOT_OF_PID[@]}"; do pkill -TERM -P "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; done
    wait 2>/dev/null
    rm -f "$GATEHOUSE_HOME"/run/*.sock "$GATEHOUSE_HOME"/run/pids/*.pid "$GATEHOUSE_HOME"/run/pids/*.tmp
    [ -n "${WELLKNOWN_CACHE:-}" ] && rm -rf "$WELLKNOWN_CACHE"
}

# True while PID is a live process (not gone, not a zombie).
is_alive() {
    local state
    [ -r "/proc/$1/stat" ] || return 1
    read -r _ _ state _ < "/proc/$1/stat" 2>/dev/null || return 1
    [ "$state" != "Z" ]
}

# Restarts whatever has died, every half second, until stopping. It checks
# every process instead of trusting `wait -n`: a child reaped while this
# shell is busy restarting another one is never reported by `wait -n`, and
# would stay dead. A slot that dies within 2 s of its start is restarted a
# second later, so a responder that cannot start does not spin the CPU.
supervise() {
    local pid slot status delay next_sweep=$((SECONDS + 5))
    declare -A last_start=()
    while [ -z "$STOPPING" ]; do
        sleep 0.5 &
        wait $! 2>/dev/null
        [ -n "$STOPPING" ] && break
        # Expired rows are swept every GATEHOUSE_SWEEP_INTERVAL seconds (one
        # minute unless set), in the background, one at a time.
        if [ "$SECONDS" -ge "$next_sweep" ] && ! is_alive "${SWEEPER_PID:-0}"; then
            "$BIN_DIR/ssoctl" sweep --quiet >>"$GATEHOUSE_HOME/log/sweep.log" 2>&1 &
            SWEEPER_PID=$!
            next_sweep=$((SECONDS + ${GATEHOUSE_SWEEP_INTERVAL:-60}))
        fi
        if ! is_alive "$NGINX_PID"; then
            wait "$NGINX_PID" 2>/dev/null; status=$?
            log "nginx exited ($status); starting it again"
            start_nginx
        fi
        if ! is_alive "$MAILER_PID"; then
            wait "$MAILER_PID" 2>/dev/null; status=$?
            log "mail sender (pid $MAILER_PID) exited ($status); restarting"
            delay=0
            [ $((SECONDS - ${MAILER_STARTED:-0})) -lt 2 ] && delay=1
            start_mailer "$delay"
        fi
        for pid in "${!SLOT_OF_PID[@]}"; do
            is_alive "$pid" && continue
            wait "$pid" 2>/dev/null; status=$?
            slot="${SLOT_OF_PID[$pid]}"
            unset "SLOT_OF_PID[$pid]"
            log "responder ${slot% *}[${slot#* }] (pid $pid) exited ($status); restarting"
            delay=0
            [ $((SECONDS - ${last_start[$slot]:-0})) -lt 2 ] && delay=1
            last_start[$slot]=$SECONDS
            start_slot ${slot% *} ${slot#* } "$delay"
        done
    done
}
