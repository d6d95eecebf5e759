# Shared by Scripts/run, Scripts/test, Scripts/ssoctl and Scripts/bench.
# Sourced, not run. Everything here works on a fresh Debian 12 machine.

GATEHOUSE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
[ -d /opt/swift/usr/bin ] && PATH="/opt/swift/usr/bin:$PATH"
export PATH

# Debian packages the stack needs to build and run.
RUN_PACKAGES=(nginx spawn-fcgi libfcgi-dev libssl-dev libsqlite3-dev libpq-dev libqrencode-dev libcurl4-openssl-dev openssl curl pkg-config ca-certificates sqlite3)

# And what the tests need on top: a real browser and its WebDriver.
TEST_PACKAGES=(chromium chromium-driver libnss3-tools python3 python3-pip postgresql)
# Prometheus (and its promtool) scrapes the ops listener and checks the shipped alert rules.
TEST_PACKAGES+=(prometheus)
# zbarimg reads the account page's QR code back in the browser tests.
TEST_PACKAGES+=(zbar-tools)
# IMPORT=PACKAGE where PyPI's name differs (PyJWT imports as jwt; PyPI's "jwt" is another library).
PYTHON_MODULES=(pytest requests cryptography joserfc selenium authlib schemathesis psycopg jwt=PyJWT)
# pytest-xdist runs the end-to-end files side by side (Scripts/test).
PYTHON_MODULES+=(xdist=pytest-xdist)
# A real SMTP server for the mail tests (Tests/e2e/test_mail_delivery.py).
PYTHON_MODULES+=(aiosmtpd)
# A client library nobody here wrote, for client_secret_post and
# private_key_jwt (Tests/e2e/test_client_authentication.py); it brings jwskate.
PYTHON_MODULES+=(requests_oauth2client=requests-oauth2client)

# The responders: one executable each, one pool of processes each.
ISSUER_RESPONDERS=(discovery jwks authorize login token userinfo logout revoke introspect par ops admin)
API_RESPONDERS=(api-a api-b)
# Scripts/bench adds the reference responder: the same runtime doing nothing.
[ -n "${GATEHOUSE_BENCH:-}" ] && API_RESPONDERS+=(hello-fcgi)

# The tests' private network and mount namespaces: ip (iproute2), unshare (util-linux).
TEST_PACKAGES+=(iproute2 util-linux)
# The resource-server programs of docs/RESOURCE-SERVERS.md in Go and Node (standard libraries only).
TEST_PACKAGES+=(golang-go nodejs)

log() { printf '%s\n' "gatehouse: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Installs whichever of the named Debian packages are missing.
ensure_packages() {
    local missing=() package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing Debian packages: ${missing[*]}"
    [ "$(id -u)" -eq 0 ] || die "missing packages ${missing[*]}; run as root or install them"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
        || die "apt-get install ${missing[*]} failed"
}

# Installs the Python modules the end-to-end tests import, from PyPI.
ensure_python_modules() {
    local missing=() module
    for module in "${PYTHON_MODULES[@]}"; do
        python3 -c "import ${module%%=*}" 2>/dev/null || missing+=("${module#*=}")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing Python modules: ${missing[*]}"
    python3 -m pip install -q --disable-pip-version-check "${missing[@]}" 2>/dev/null \
        || python3 -m pip install -q --disable-pip-version-check --break-system-packages "${missing[@]}" \
        || die "pip install ${missing[*]} failed"
}

# The build's output minus its progress lines and one known toolchain warning.
# The static FoundationEssentials calls mktemp(), so gold repeats glibc's
# link-time warning for every executable (14 lines of ~430 characters), and
# neither gold nor GNU ld can silence one symbol's warning: drop exactly those.
# Line-buffered: into a pipe or a log, each line must pass at once.
without_build_noise() {
    grep --line-buffered -vE -e '^\[[0-9]+/[0-9]+\]' \
        -e "/libFoundationEssentials\.a\([^)]*\):.*: warning: the use of \`mktemp' is dangerous, better use \`mkstemp' or \`mkdtemp'\$" \
        || true
}

# SwiftPM's "[done/total] Compiling ..." lines (a first build has thousands)
# as one line at each tenth of the way, so a build of several minutes shows
# it is alive wherever its output goes: a terminal, a pipe, a log file.
# Counts under ten steps ("[1/1] Planning build") are the preparation, not
# the build: not shown. Every other line passes unchanged, each at once.
build_progress() {
    local line tenth shown=0
    while IFS= read -r line || [ -n "$line" ]; do
        if [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\] ]]; then
            [ "${BASH_REMATCH[2]}" -ge 10 ] || continue
            tenth=$((BASH_REMATCH[1] * 10 / BASH_REMATCH[2]))
            [ "$tenth" -gt "$shown" ] || continue
            shown=$tenth
            printf 'gatehouse: building: %d%% (step %d of %d)\n' $((tenth * 10)) "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
        else
            printf '%s\n' "$line"
        fi
    done
}

# Builds every product in release mode; prints the binary folder.
# The Swift runtime and FoundationEssentials are linked statically: each
# responder then maps only the runtime code it uses (under 20 MB resident,
# docs/PERFORMANCE.md) and the binaries run on a machine without Swift.
build_release() {
    (
        cd "$GATEHOUSE_ROOT" || exit 1
        swift build -c release --static-swift-stdlib 2>&1 | build_progress | without_build_noise >&2
        exit "${PIPESTATUS[0]}"
    ) || die "release build failed"
    BIN_DIR="$(cd "$GATEHOUSE_ROOT" && swift build -c release --static-swift-stdlib --show-bin-path)"
    export BIN_DIR
}

# Reads GATEHOUSE_HOME and GATEHOUSE_BASE_PORT with their defaults.
load_settings() {
    GATEHOUSE_HOME="${GATEHOUSE_HOME:-$GATEHOUSE_ROOT/var}"
    mkdir -p "$GATEHOUSE_HOME"
    GATEHOUSE_HOME="$(cd "$GATEHOUSE_HOME" && pwd)"
    GATEHOUSE_BASE_PORT="${GATEHOUSE_BASE_PORT:-8443}"
    case "$GATEHOUSE_BASE_PORT" in ''|*[!0-9]*) die "GATEHOUSE_BASE_PORT must be a number" ;; esac
    [ "$GATEHOUSE_BASE_PORT" -ge 1 ] && [ "$GATEHOUSE_BASE_PORT" -le 65531 ] || die "GATEHOUSE_BASE_PORT out of range"
    # The ops listener (metrics, health): loopback only, base+4 unless moved.
    GATEHOUSE_OPS_PORT="${GATEHOUSE_OPS_PORT:-$((GATEHOUSE_BASE_PORT + 4))}"
    case "$GATEHOUSE_OPS_PORT" in ''|*[!0-9]*) die "GATEHOUSE_OPS_PORT must be a number" ;; esac
    [ "$GATEHOUSE_OPS_PORT" -ge 1 ] && [ "$GATEHOUSE_OPS_PORT" -le 65535 ] || die "GATEHOUSE_OPS_PORT out of range"
    GATEHOUSE_WORKERS="${GATEHOUSE_WORKERS:-2}"
    ISSUER_URL="https://localhost:$GATEHOUSE_BASE_PORT"
    export GATEHOUSE_HOME GATEHOUSE_BASE_PORT GATEHOUSE_OPS_PORT
}

# Variables of Scripts/run's own (or secrets) that the responders never read.
SCRIPT_ONLY_SETTINGS=" GATEHOUSE_HOME GATEHOUSE_DEMO_PASSWORD GATEHOUSE_WORKERS GATEHOUSE_SKIP_BUILD GATEHOUSE_BENCH GATEHOUSE_KEEP_E2E_HOMES GATEHOUSE_E2E_WORKERS "

# The configuration file responders and ssoctl read (environment wins): the
# base port and every GATEHOUSE_* setting this start was given, so a later
# `Scripts/ssoctl` without them acts on the same origins as the running
# stack. Readable by the responders' group, not by every local user.
write_config() {
    local file="$GATEHOUSE_HOME/gatehouse.conf" name value
    {
        printf '%s\n' "# Written by Scripts/run at every start: the settings of the running stack." \
            "# Put your own settings in the environment (README \"Configuration\")." \
            "GATEHOUSE_BASE_PORT=$GATEHOUSE_BASE_PORT"
        while IFS= read -r name; do
            case "$SCRIPT_ONLY_SETTINGS" in *" $name "*) continue ;; esac
            case "$name" in GATEHOUSE_BASE_PORT | GATEHOUSE_OPS_PORT | GATEHOUSE_*_RATE) continue ;; esac
            value="${!name}"
            [[ "$value" == *$'\n'* ]] || printf '%s=%s\n' "$name" "$value"
        done < <(compgen -e GATEHOUSE_ | sort)
    } > "$file.tmp" || die "cannot write $file"
    chmod 640 "$file.tmp" && mv -f "$file.tmp" "$file"
}

# A local CA, made once, and a server certificate it signs for localhost,
# 127.0.0.1, ::1 and the hosts of the origins (Scripts/lib/origins.sh),
# issued again when an origin's host is not among its names. The keys never
# leave $GATEHOUSE_HOME/tls (root's, 0600); the folder is 0711 so the
# resource servers (another user) can read ca.pem by name to trust the
# issuer when they fetch its JWKS.
ensure_tls() {
    local tls="$GATEHOUSE_HOME/tls" new_ca=""
    mkdir -p "$tls" && chmod 711 "$tls"
    if [ ! -s "$tls/ca.pem" ]; then
        log "creating a local CA in $tls"
        (
            cd "$tls" && umask 077 || exit 1
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 3650 \
                -subj "/CN=Gatehouse local CA" -addext "basicConstraints=critical,CA:TRUE" \
                -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null && chmod 644 ca.pem
        ) || die "TLS CA generation failed"
        new_ca=1
    fi
    [ -z "$new_ca" ] && [ -s "$tls/server.pem" ] && [ -s "$tls/server.key" ] && certificate_covers_origins && return 0
    [ -s "$tls/ca.key" ] || die "$tls/server.pem does not name every origin's host and $tls/ca.key is missing to issue another"
    log "issuing a TLS certificate for $(certificate_names) in $tls"
    (
        cd "$tls" && umask 077 || exit 1
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key.new -out server.csr \
            -subj "/CN=localhost" 2>/dev/null || exit 1
        printf '%s\n' "subjectAltName=$(certificate_names)" "basicConstraints=critical,CA:FALSE" \
            "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" > server.ext
        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem.new -days 825 \
            -extfile server.ext 2>/dev/null || exit 1
        rm -f server.csr server.ext
        chmod 644 server.pem.new && mv -f server.key.new server.key && mv -f server.pem.new server.pem
    ) || die "TLS certificate generation failed"
}

# Lines `server unix:...;` for one responder's pool. The resource servers'
# pools (GET only) keep their FastCGI connections open between requests
# (fastcgi_keep_conn in their locations): the accept loop waits on every
# kept connection and the listening socket at once, so an idle one never
# stalls another, and nginx retries a GET that met a connection closing
# under it on the next process.
# 16 idle connections per nginx worker: with fewer, nginx closes and reopens
# connections under load (2 per worker doubled api-a's p99 in Scripts/bench).
upstream_block() {
    local name="$1" i
    printf '    upstream %s {\n' "$name"
    for ((i = 0; i < GATEHOUSE_WORKERS; i++)); do
        printf '        server unix:%s/run/%s-%d.sock max_fails=0;\n' "$GATEHOUSE_HOME" "$name" "$i"
    done
    case "$name" in api-a|api-b|hello-fcgi) printf '        keepalive 16;\n' ;; esac
    printf '    }\n'
}

listen_directives() {
    local port="$1" ipv6=""
    [ -f /proc/net/if_inet6 ] && ip -6 addr show lo 2>/dev/null | grep -q '::1' && ipv6=1
    printf '127.0.0.1:%s' "$port"
    [ -n "$ipv6" ] && printf ' ssl;\n        listen [::1]:%s' "$port"
}

# www/ for every language, branded (README "Branding and languages"), into
# $GATEHOUSE_PAGES_DIR ($GATEHOUSE_HOME/pages): nginx serves it, and the
# responders that build pages read its catalogues. World-readable: nginx's
# workers are another user.
render_pages() {
    PAGES_DIR="${GATEHOUSE_PAGES_DIR:-$GATEHOUSE_HOME/pages}"
    (umask 022 && "$BIN_DIR/ssoctl" pages --source "$GATEHOUSE_ROOT/www" >/dev/null) || die "ssoctl pages failed"
}

# Renders nginx/gatehouse.conf.template into $GATEHOUSE_HOME/nginx/.
render_nginx_config() {
    local out="$GATEHOUSE_HOME/nginx" upstreams="" name
    mkdir -p "$out" "$GATEHOUSE_HOME/run/nginx" "$GATEHOUSE_HOME/log"
    # nginx's 2-second copies of discovery and the JWKS: in memory (a tmpfs),
    # because nginx writes a response it caches to the cache's folder as it
    # streams it, and on a full disk that write fails and drops the answer.
    # One folder per stack (its base port), emptied at every start so its
    # workers (whoever they run as this time) make it anew.
    WELLKNOWN_CACHE="/dev/shm/gatehouse-$GATEHOUSE_BASE_PORT-wellknown"
    [ -d /dev/shm ] || WELLKNOWN_CACHE="$GATEHOUSE_HOME/run/nginx/wellknown"
    rm -rf "$WELLKNOWN_CACHE"
    for name in "${ISSUER_RESPONDERS[@]}" "${API_RESPONDERS[@]}"; do upstreams+="$(upstream_block "$name")"$'\n'; done
    cp "$GATEHOUSE_ROOT/nginx/security-headers.conf" "$GATEHOUSE_ROOT/nginx/fastcgi.conf" "$out/"
    # Snippets both layouts share: production's files, as they are.
    cp "$GATEHOUSE_ROOT/deploy/nginx/snippets/gatehouse-rate-limit-key.conf" \
        "$GATEHOUSE_ROOT/deploy/nginx/snippets/gatehouse-hidden-files.conf" \
        "$GATEHOUSE_ROOT/deploy/nginx/snippets/gatehouse-wellknown-cache.conf" "$out/"
    sed -e "s#@@HOME@@#$GATEHOUSE_HOME#g" -e "s#@@APP_LINKS_ORIGIN@@#$APP_LINKS_URL#g" \
        "$GATEHOUSE_ROOT/nginx/page-headers.conf" > "$out/page-headers.conf"
    local text
    text="$(cat "$GATEHOUSE_ROOT/nginx/gatehouse.conf.template")"
    text="${text//@@UPSTREAMS@@/$upstreams}"
    text="${text//@@ISSUER_LOCATIONS@@/$(cat "$GATEHOUSE_ROOT/nginx/issuer-locations.conf" 2>/dev/null)}"
    text="${text//@@API_A_LOCATIONS@@/$(cat "$GATEHOUSE_ROOT/nginx/api-a-locations.conf" 2>/dev/null)}"
    local bench=""
    [ -n "${GATEHOUSE_BENCH:-}" ] && bench=$'        location = /bench/hello {\n            include @@HOME@@/nginx/fastcgi.conf;\n            fastcgi_keep_conn on;\n            fastcgi_pass hello-fcgi;\n        }'
    text="${text//@@BENCH_LOCATIONS@@/$bench}"
    text="${text//@@API_B_LOCATIONS@@/$(cat "$GATEHOUSE_ROOT/nginx/api-b-locations.conf" 2>/dev/null)}"
    text="${text//@@USER_DIRECTIVE@@/$NGINX_USER_DIRECTIVE}"
    text="${text//@@LOGIN_RATE@@/${GATEHOUSE_LOGIN_RATE:-10r/s}}"
    text="${text//@@TOKEN_RATE@@/${GATEHOUSE_TOKEN_RATE:-50r/s}}"
    text="${text//@@AUTHORIZE_RATE@@/${GATEHOUSE_AUTHORIZE_RATE:-30r/s}}"
    text="${text//@@SIGNUP_RATE@@/${GATEHOUSE_SIGNUP_RATE:-10r/m}}"
    text="${text//@@RESET_RATE@@/${GATEHOUSE_RESET_RATE:-10r/m}}"
    text="${text//@@LISTEN_ISSUER@@/$(listen_directives "$GATEHOUSE_BASE_PORT")}"
    text="${text//@@LISTEN_API_A@@/$(listen_directives $((GATEHOUSE_BASE_PORT + 1)))}"
    text="${text//@@LISTEN_API_B@@/$(listen_directives $((GATEHOUSE_BASE_PORT + 2)))}"
    text="${text//@@LISTEN_APP_LINKS@@/$(listen_directives $((GATEHOUSE_BASE_PORT + 3)))}"
    text="${text//@@OPS_PORT@@/$GATEHOUSE_OPS_PORT}"
    text="${text//@@ISSUER_NAMES@@/$(server_names "$ISSUER_HOST")}"
    text="${text//@@API_A_NAMES@@/$(server_names "$API_A_HOST")}"
    text="${text//@@API_B_NAMES@@/$(server_names "$API_B_HOST")}"
    text="${text//@@APP_LINKS_NAMES@@/$(server_names "$APP_LINKS_HOST")}"
    text="${text//@@ROOT@@/$GATEHOUSE_ROOT}"
    text="${text//@@PAGES@@/$PAGES_DIR}"
    text="${text//@@WELLKNOWN_CACHE@@/$WELLKNOWN_CACHE}"
    text="${text//@@HOME@@/$GATEHOUSE_HOME}"
    printf '%s\n' "$text" > "$out/nginx.conf"
}

# log/ and every file in it are their owner's alone (root's, as root): nginx's
# error log holds request lines, the responders' logs client addresses and
# account names. Files created later get 0600 from Scripts/run's umask 077;
# this also tightens what an older start left behind.
secure_log_directory() {
    local folder="$GATEHOUSE_HOME/log"
    mkdir -p "$folder" && chmod 700 "$folder" || die "cannot create $folder"
    find "$folder" -maxdepth 1 -type f ! -perm 0600 -exec chmod 0600 {} + || die "cannot chmod the files in $folder"
}

# One note per running stack, so that Scripts/ssoctl acts on the stack that
# runs rather than on the defaults: var/stacks/<pid of Scripts/run>, with
# `home=`, `port=`, `bin_dir=` and `started=` lines. Scripts/run removes its
# note when it exits; a note whose process is gone (or whose pid now names
# another process: `started` differs) is ignored.
STACKS_DIRECTORY="$GATEHOUSE_ROOT/var/stacks"

# The start time of process PID in clock ticks (/proc/PID/stat field 22).
process_start_time() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    stat="${stat##*) }"  # the fields after "pid (comm) ", which may hold spaces
    set -- $stat
    printf '%s\n' "${20}"
}

record_running_stack() {
    local note="$STACKS_DIRECTORY/$$"
    # Readable by anyone who may run Scripts/ssoctl (Scripts/run's umask is 077 here).
    (umask 022 && mkdir -p "$STACKS_DIRECTORY") 2>/dev/null
    { printf 'home=%s\nport=%s\nbin_dir=%s\nstarted=%s\n' "$GATEHOUSE_HOME" "$GATEHOUSE_BASE_PORT" "$BIN_DIR" \
        "$(process_start_time $$)" > "$note.tmp" && chmod 644 "$note.tmp" && mv -f "$note.tmp" "$note"; } 2>/dev/null \
        || log "warning: cannot write $note; Scripts/ssoctl will not find this stack without GATEHOUSE_HOME"
}

forget_running_stack() { rm -f "$STACKS_DIRECTORY/$$" "$STACKS_DIRECTORY/$$.tmp" 2>/dev/null; }

# Prints the notes of the stacks still running; removes (if it may) the
# note of one that is gone, left by a Scripts/run killed with SIGKILL.
running_stack_notes() {
    local note pid started
    for note in "$STACKS_DIRECTORY"/*; do
        pid="${note##*/}"
        case "$pid" in '' | *[!0-9]*) continue ;; esac
        if started="$(process_start_time "$pid")" && [ -n "$started" ] && [ "$started" = "$(note_value "$note" started)" ]; then
            printf '%s\n' "$note"
        else
            rm -f "$note" 2>/dev/null
        fi
    done
}

# `KEY=` line of a note (read as data, never run).
note_value() { sed -n "s/^$2=//p" "$1" | head -n 1; }
