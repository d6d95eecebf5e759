# The public origins in the Scripts/run layout; sourced by Scripts/run.
#
# GATEHOUSE_ISSUER, GATEHOUSE_API_A_ORIGIN, GATEHOUSE_API_B_ORIGIN and
# GATEHOUSE_APP_LINKS_ORIGIN are what the responders put in tokens and
# pages, and the APIs fetch the issuer's JWKS from the issuer origin. Here
# nginx listens on 127.0.0.1 and [::1] only, on the base port and the three
# after it, so an origin works only if its host leads there and its port is
# its role's: https://HOST:PORT where HOST resolves on this machine to
# 127.0.0.1 or ::1 and nothing else (localhost, 127.0.0.1, [::1], or a name
# /etc/hosts maps there) and PORT is GATEHOUSE_BASE_PORT (+1, +2, +3). Such
# an origin is applied everywhere (banner, nginx's server_name, the
# certificate's names, the interstitial page's link); any other is refused
# before anything starts, naming the variable. Real domains: deploy/ and
# docs/DEPLOY.md.

# Role, variable, port offset.
ORIGIN_ROLES=("issuer GATEHOUSE_ISSUER 0" "api-a GATEHOUSE_API_A_ORIGIN 1" "api-b GATEHOUSE_API_B_ORIGIN 2"
    "app-links GATEHOUSE_APP_LINKS_ORIGIN 3")

# The addresses nginx listens on (listen_directives in common.sh).
loopback_listens_on_ipv6() { [ -f /proc/net/if_inet6 ] && ip -6 addr show lo 2>/dev/null | grep -q '::1'; }

# Refuses (exit 1) unless HOST resolves only to addresses nginx listens on,
# at least one of them served here (::1 needs IPv6 on the loopback).
check_origin_host() {
    local variable="$1" value="$2" host="$3" addresses address served=""
    case "$host" in
        \[*\]) addresses="${host:1:${#host}-2}" ;;
        *) addresses="$(getent ahosts "$host" | awk '{ print $1 }' | sort -u)" ;;
    esac
    [ -n "$addresses" ] || die "$variable=$value: $host does not resolve on this machine; Scripts/run serves only hosts that resolve to 127.0.0.1 or ::1 here (localhost, or a name in /etc/hosts); a real domain: docs/DEPLOY.md"
    for address in $addresses; do
        case "$address" in
            127.0.0.1) served=1 ;;
            ::1) loopback_listens_on_ipv6 && served=1 ;;
            *) die "$variable=$value: $host resolves to $address, where Scripts/run's nginx does not listen (127.0.0.1 and ::1 only); map it to 127.0.0.1 in /etc/hosts, or deploy with docs/DEPLOY.md for a real domain" ;;
        esac
    done
    [ -n "$served" ] || die "$variable=$value: $host resolves to ::1 only, and this machine's loopback has no IPv6; use 127.0.0.1 or localhost"
}

# Sets ISSUER_URL, API_A_URL, API_B_URL, APP_LINKS_URL and their *_HOST from
# the environment (default https://localhost:PORT), or refuses a value.
resolve_public_origins() {
    local entry role variable offset port value host given_port prefix label
    for entry in "${ORIGIN_ROLES[@]}"; do
        read -r role variable offset <<< "$entry"
        port=$((GATEHOUSE_BASE_PORT + offset))
        value="${!variable:-https://localhost:$port}"
        [[ "$value" =~ ^https://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:([0-9]{1,5}))?$ ]] \
            || die "$variable=$value: expected https://HOST:PORT (no path, no trailing slash)"
        host="${BASH_REMATCH[1]}" given_port="${BASH_REMATCH[4]:-443}"
        # The default (localhost) is what nginx listens on by construction.
        [ -z "${!variable:-}" ] || check_origin_host "$variable" "$value" "$host"
        label="GATEHOUSE_BASE_PORT"
        [ "$offset" = 0 ] || label+=" + $offset"
        if [ "$given_port" != "$port" ]; then
            # One more node of an issuer whose state is in PostgreSQL: the
            # origin is the first node's (or a load balancer's), and this
            # node only moves where it listens (GATEHOUSE_BASE_PORT).
            [ -n "${GATEHOUSE_DATABASE_URL:-}" ] \
                || die "$variable=$value: Scripts/run serves $role on port $port ($label), not $given_port; use https://$host:$port or move GATEHOUSE_BASE_PORT"
            log "$variable=$value: served by another node of this issuer; this node's $role listens on port $port"
        fi
        prefix="$(printf '%s' "$role" | tr 'a-z-' 'A-Z_')"
        printf -v "${prefix}_URL" '%s' "$value"
        printf -v "${prefix}_HOST" '%s' "$host"
    done
}

# The certificate's subjectAltName: the defaults and every origin's host.
certificate_names() {
    local names=("DNS:localhost" "IP:127.0.0.1" "IP:::1") host name
    for host in "$ISSUER_HOST" "$API_A_HOST" "$API_B_HOST" "$APP_LINKS_HOST"; do
        case "$host" in
            \[*\]) name="IP:${host:1:${#host}-2}" ;;
            *[!0-9.]*) name="DNS:$host" ;;
            *) name="IP:$host" ;;
        esac
        [[ " ${names[*]} " == *" $name "* ]] || names+=("$name")
    done
    (IFS=,; printf '%s\n' "${names[*]}")
}

# True when the server certificate names every origin's host.
certificate_covers_origins() {
    local certificate="$GATEHOUSE_HOME/tls/server.pem" host
    [ -s "$certificate" ] || return 1
    for host in "$ISSUER_HOST" "$API_A_HOST" "$API_B_HOST" "$APP_LINKS_HOST"; do
        case "$host" in
            \[*\]) openssl x509 -in "$certificate" -noout -checkip "${host:1:${#host}-2}" | grep -q ' does match' || return 1 ;;
            *[!0-9.]*) openssl x509 -in "$certificate" -noout -checkhost "$host" | grep -q ' does match' || return 1 ;;
            *) openssl x509 -in "$certificate" -noout -checkip "$host" | grep -q ' does match' || return 1 ;;
        esac
    done
}

# `server_name` of a server block: localhost, and the origin's host when
# that is another name (an address is no server name).
server_names() {
    if [ "$1" = localhost ] || [[ "$1" == \[* ]] || [[ "$1" =~ ^[0-9.]+$ ]]; then
        printf 'localhost\n'
    else
        printf 'localhost %s\n' "$1"
    fi
}
