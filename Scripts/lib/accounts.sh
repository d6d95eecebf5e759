# Who runs what in the Scripts/run layout; sourced by Scripts/run.
#
# As root, three accounts keep the parts apart:
#   gatehouse       the responders, ssoctl and the sweeper. Owns the home and
#                   what the responders write there: the database and its
#                   -wal/-shm, keys/, cache/, applinks/.
#   gatehouse-web   nginx's workers. The group of every responder socket
#                   (gatehouse:gatehouse-web 0660) and its only member, so no
#                   other local user (nobody included) can connect to a
#                   responder and forge REMOTE_ADDR, Origin or Sec-Fetch-Site.
#   root            this script, nginx's master (it reads tls/server.key)
#                   and the logs (log/, 0700).
# Not as root, everything runs as the invoking user, which then cannot keep
# nginx and the responders apart (README "Configuration").

RESPONDER_USER="$(id -un)"
RESPONDER_GROUP="$(id -gn)"
WEB_USER="$(id -un)"
WEB_GROUP="$(id -gn)"
NGINX_USER_DIRECTIVE=""

# Creates system user and group NAME unless they exist: no login shell, no
# home. Two stacks starting at once may race for /etc/passwd's lock, so a
# failed attempt is retried while the account is still missing.
ensure_system_account() {
    local name="$1" attempt
    for attempt in 1 2 3 4 5; do
        getent group "$name" >/dev/null || groupadd --system "$name" 2>/dev/null
        getent passwd "$name" >/dev/null \
            || useradd --system --gid "$name" --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$name" 2>/dev/null
        getent passwd "$name" >/dev/null && getent group "$name" >/dev/null && return 0
        sleep "0.$attempt"
    done
    die "cannot create the system user $name (groupadd/useradd failed)"
}

# Picks the accounts (as root: gatehouse and gatehouse-web) and opens the
# home's directories to them. A home or checkout an account cannot reach
# (under /root, say) falls back to root for that part, with a warning.
choose_process_users() {
    mkdir -p "$GATEHOUSE_HOME/run/pids"
    chmod 711 "$GATEHOUSE_HOME" "$GATEHOUSE_HOME/run"
    [ "$(id -u)" -eq 0 ] || return 0
    ensure_system_account gatehouse
    ensure_system_account gatehouse-web
    if runuser -u gatehouse -- test -x "$GATEHOUSE_HOME" -a -x "$BIN_DIR/token" -a -r "$GATEHOUSE_HOME/tls/ca.pem" 2>/dev/null; then
        RESPONDER_USER=gatehouse RESPONDER_GROUP=gatehouse
    else
        log "warning: user gatehouse cannot reach $GATEHOUSE_HOME or $BIN_DIR; the responders run as root"
        RESPONDER_USER=root RESPONDER_GROUP=root
    fi
    if runuser -u gatehouse-web -- test -r "$PAGES_DIR/languages.conf" -a -x "$GATEHOUSE_HOME/run" 2>/dev/null; then
        WEB_USER=gatehouse-web WEB_GROUP=gatehouse-web
    else
        log "warning: user gatehouse-web cannot read $PAGES_DIR or reach $GATEHOUSE_HOME; nginx workers run as root"
        WEB_USER=root WEB_GROUP=root
    fi
    NGINX_USER_DIRECTIVE="user $WEB_USER $WEB_GROUP;"
    # run/ (root's): the responders' group may list it, so the ops responder
    # finds every pool's sockets for /health/live; others may only pass
    # through to a socket they know (nginx's workers).
    chgrp "$RESPONDER_GROUP" "$GATEHOUSE_HOME/run" && chmod 751 "$GATEHOUSE_HOME/run" || die "cannot open $GATEHOUSE_HOME/run to the responders"
    give_home_to_responders
}

# The home and what the responders write belong to their user (a home made
# by an older Scripts/run, which ran them as root, is handed over too). ssoctl
# started as root becomes the home's owner, so its files stay theirs.
give_home_to_responders() {
    local path
    chown "$RESPONDER_USER:$RESPONDER_GROUP" "$GATEHOUSE_HOME" || die "cannot chown $GATEHOUSE_HOME"
    for path in gatehouse.sqlite gatehouse.sqlite-wal gatehouse.sqlite-shm gatehouse.sqlite-journal keys cache applinks pages mail; do
        [ -e "$GATEHOUSE_HOME/$path" ] || continue
        chown -R "$RESPONDER_USER:$RESPONDER_GROUP" "$GATEHOUSE_HOME/$path" || die "cannot chown $GATEHOUSE_HOME/$path"
    done
}

# spawn-fcgi's options for one slot: as root, the responder's user and the
# socket's owner, group (nginx's workers) and mode; otherwise a socket of
# the invoking user's alone (nginx's workers are that user too).
spawn_fcgi_owner_options() {
    if [ "$(id -u)" -ne 0 ]; then
        printf '%s\n' -M 0600
        return
    fi
    # spawn-fcgi refuses to switch to root (-u/-U root); root needs no switch.
    [ "$RESPONDER_USER" != root ] && printf '%s\n' -u "$RESPONDER_USER" -g "$RESPONDER_GROUP" -U "$RESPONDER_USER"
    [ "$WEB_GROUP" != root ] && printf '%s\n' -G "$WEB_GROUP"
    printf '%s\n' -M 0660
}
