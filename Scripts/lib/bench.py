"""Scripts/bench: throughput and latency of Gatehouse's endpoints against their
physical references, measured in one run on one stack (ratios, not absolutes)."""
import argparse
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
from urllib.parse import quote, urlsplit

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "e2e"))
sys.path.insert(0, os.path.dirname(__file__))
from bench_backchannel import backchannel_rows  # noqa: E402
from bench_cpu import cpu_split, summarize  # noqa: E402
from bench_dpop import dpop_api_data, dpop_refresh  # noqa: E402
from bench_journeys import journey_rows  # noqa: E402
from bench_metrics import metrics_cost  # noqa: E402
from bench_postgresql import ROUNDS, WORKERS, compare  # noqa: E402
from bench_physical import PhysicalReferences  # noqa: E402
from bench_references import openssl_sign_rate, scrypt_rate  # noqa: E402
from bench_report import chart, print_table, resources_table  # noqa: E402
from bench_scale import fill_database, sweep  # noqa: E402
from bench_signing import signing_rows  # noqa: E402
from bench_admin import admin_rows  # noqa: E402
from bench_wellknown import wellknown_ceiling  # noqa: E402
from listening_ports import free_port  # noqa: E402
from oidc_flow import SCOPE, App  # noqa: E402
from callgrind_profile import REQUESTS, print_profile, profile  # noqa: E402
from stack import DEMO_PASSWORD, Stack  # noqa: E402

WRK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrk")
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def wrk(url, seconds, connections, threads, script="report.lua", headers=(), env=None):
    # wrk takes one script: the run's own hooks, then the shared report.
    combined = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    for part in dict.fromkeys([script, "report.lua"]):
        combined.write(open(os.path.join(WRK, part)).read() + "\n")
    combined.close()
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "-s", combined.name]
    for header in headers:
        command += ["-H", header]
    try:
        output = subprocess.run(command + [url], capture_output=True, text=True, env=dict(os.environ, **(env or {})),
                                timeout=seconds + 60)
    finally:
        os.unlink(combined.name)
    match = re.search(r"WRK_JSON (\{.*\})", output.stdout)
    if not match:
        raise RuntimeError(f"wrk failed: {output.stdout}\n{output.stderr}")
    result = json.loads(match.group(1))
    # A run's own script may add lines of its own (completed flows, checked answers).
    for extra in re.finditer(r"(?:FLOWS|ANSWERS)_JSON (\{.*\})", output.stdout):
        result.update(json.loads(extra.group(1)))
    return result


def code_exchange(stack, app, session_cookie, seconds, connections, threads):
    """Collects fresh codes through /authorize (SSO cookie), then spends each once at /token."""
    with tempfile.TemporaryDirectory() as folder:
        env = {"GATEHOUSE_BENCH_CODES": os.path.join(folder, "codes"), "GATEHOUSE_BENCH_THREADS": str(threads),
               "GATEHOUSE_BENCH_FORM": "&client_id=" + app.client_id + "&redirect_uri=" + quote(app.redirect_uri, safe="")
                                       + "&code_verifier=" + app.verifier}
        collected = wrk(app.authorize_url(), seconds, connections, threads, "collect-codes.lua",
                        headers=["Cookie: sso_session=" + session_cookie], env=env)
        result = wrk(stack.issuer + "/token", seconds, connections, threads, "exchange-codes.lua", env=env)
        total = sum(1 for name in os.listdir(folder) for _ in open(os.path.join(folder, name)))
        if total < result["requests"]:
            raise RuntimeError(f"only {total} codes for {result['requests']} exchanges: lengthen the collection")
        return collected, result


def refresh_grant(stack, http, seconds, connections, threads):
    """Refreshes independent token families, each reply's successor sent next."""
    with tempfile.TemporaryDirectory() as folder:
        per_thread = connections // threads + 2
        for thread in range(1, threads + 1):
            with open(os.path.join(folder, f"refresh.{thread}"), "w") as tokens:
                for _ in range(per_thread):
                    app = App(stack, http)  # the SSO cookie in `http` skips the login page
                    code = app.code_from(app.authorize())
                    tokens.write(app.exchange(code).json()["refresh_token"] + "\n")
        return wrk(stack.issuer + "/token", seconds, connections, threads, "refresh-tokens.lua",
                   env={"GATEHOUSE_BENCH_REFRESH": os.path.join(folder, "refresh")})


def full_login(stack, seconds, connections):
    """authorize (no cookie) → POST /login (one scrypt) → POST /token, in a loop
    per connection; one connection per wrk thread keeps each loop in order.
    A sign-in takes a fifth of a second of CPU, so sign-ins still in flight
    when wrk stops are lost from the count: two connections per core keep
    both login processes busy with the fewest in flight, and the run is
    three times as long as the others."""
    connections, seconds = min(connections, 2 * (os.cpu_count() or 2)), 3 * seconds
    app = App(stack, stack.session())
    split = urlsplit(app.authorize_url())
    env = {"GATEHOUSE_BENCH_AUTHORIZE_PATH": split.path + "?" + split.query,
           "GATEHOUSE_BENCH_LOGIN_FORM": "&email=alice%40example.com&password=" + quote(DEMO_PASSWORD, safe=""),
           "GATEHOUSE_BENCH_TOKEN_FORM": "&grant_type=authorization_code&client_id=" + app.client_id
                                         + "&redirect_uri=" + quote(app.redirect_uri, safe="") + "&code_verifier=" + app.verifier}
    result = wrk(stack.issuer + "/authorize", seconds, connections, connections, "full-login.lua", env=env)
    # A completed sign-in is three requests; the figure that matters is sign-ins/s.
    return dict(result, rps=result["flows"] / seconds)


def native_sso_exchange(stack, http, seconds, connections, threads):
    """App #2 exchanges app #1's id_token and device secret (current draft, HTTP Basic)."""
    app = App(stack, http, scope=SCOPE + " device_sso")
    first = app.exchange(app.code_from(app.authorize()), device_id="BENCH-DEVICE").json()
    form = {"grant_type": TOKEN_EXCHANGE, "audience": stack.issuer, "subject_token": first["id_token"],
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token", "actor_token": first["device_secret"],
            "actor_token_type": "urn:openid:params:token-type:device-secret", "scope": "openid api:serverA"}
    probe = http.post(stack.issuer + "/token", auth=("mobile-app-002", ""), data=form)
    if probe.status_code != 200:
        raise RuntimeError("Native SSO exchange failed: " + probe.text)
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False, dir=WRK, prefix="tmp-") as script:
        body = "&".join(f"{key}={quote(value, safe='')}" for key, value in form.items())
        script.write('wrk.method = "POST"\nwrk.body = "%s"\nwrk.headers["Content-Type"] = '
                     '"application/x-www-form-urlencoded"\n' % body)
    try:
        basic = base64.b64encode(b"mobile-app-002:").decode()
        return wrk(stack.issuer + "/token", seconds, connections, threads, os.path.basename(script.name),
                   headers=["Authorization: Basic " + basic])
    finally:
        os.unlink(script.name)


def writing_paths(stack, http, app, seconds, connections, threads):
    """(name, result) for the paths that write: a code issued, the code
    exchange, the refresh grant, the Native SSO exchange."""
    collected, exchange = code_exchange(stack, app, http.cookies.get("sso_session"), seconds, connections, threads)
    return [("GET /authorize with SSO cookie (code issue)", collected),
            ("POST /token authorization_code", exchange),
            ("POST /token refresh_token (rotation)", refresh_grant(stack, http, seconds, connections, threads)),
            ("POST /token token-exchange (Native SSO)", native_sso_exchange(stack, http, seconds, connections, threads))]


def token_paths(stack, http, app, seconds, connections, threads, bound, login_bound):
    """The rows that sign or hash: code exchange, refresh, Native SSO, full login."""
    targets = {"POST /token authorization_code": "≥ 0.85 of signing bound", "POST /token refresh_token (rotation)": "≥ 0.85 of signing bound"}
    rows = [(name, result, None if name.startswith("GET") else result["rps"] / bound, targets.get(name))
            for name, result in writing_paths(stack, http, app, seconds, connections, threads)]
    refresh = next(result for name, result, _, _ in rows if name == "POST /token refresh_token (rotation)")
    bound_refresh = dpop_refresh(stack, http, seconds, connections, threads, wrk)
    rows.append(("POST /token refresh_token with DPoP (fresh proof each)", bound_refresh, bound_refresh["rps"] / refresh["rps"],
                 "≥ 0.80 of refresh without DPoP"))
    login = full_login(stack, seconds, connections)
    rows.append(("full login: authorize → login → token (sign-ins/s)", login, login["rps"] / login_bound,
                 "≥ 0.90 of scrypt rate"))
    return rows


def request_paths(stack, seconds, connections, threads, bearer):
    """The rows read against the physical references (a C libfcgi hello-world
    and nginx `return 200` behind a bare nginx, no Gatehouse code), with the
    Swift hello-world behind Gatehouse's own nginx for the split between them."""
    with PhysicalReferences(stack) as physical:
        static = wrk(physical.static, seconds, connections, threads)
        c_hello = wrk(physical.hello, seconds, connections, threads)
        # The same C responder sent the API calls' kilobyte Authorization
        # header: what carrying the token costs TLS, nginx and FastCGI before
        # any Gatehouse code reads it (the API rows stay read against c_hello).
        c_bearer = wrk(physical.hello, seconds, connections, threads, headers=[bearer])
    rows = [("nginx return 200, bare nginx (reference)", static, None, None),
            ("C hello-world libfcgi ×2, bare nginx (reference)", c_hello, None, None),
            ("C hello-world sent the same Bearer header", c_bearer, c_bearer["rps"] / c_hello["rps"], None)]
    # Throughput first, on its own: perf sampling every CPU beside a run
    # takes a fifth of its throughput. Then one more run of each under perf,
    # for where the cores go.
    hello = wrk(stack.api_a + "/bench/hello", seconds, connections, threads)
    data = wrk(stack.api_a + "/api/data", seconds, connections, threads, headers=[bearer])
    hello["cpu"] = summarize(cpu_split(lambda: wrk(stack.api_a + "/bench/hello", seconds, connections, threads), seconds)[1],
                             "hello-fcgi")
    data["cpu"] = summarize(cpu_split(lambda: wrk(stack.api_a + "/api/data", seconds, connections, threads, headers=[bearer]),
                                      seconds)[1], "api-a")
    rows.append(("Swift hello-world behind Gatehouse's nginx", hello, hello["rps"] / c_hello["rps"], None))
    rows.append(("GET /api/data (api-a, validated JWT)", data, data["rps"] / c_hello["rps"], "≥ 0.85 of C hello, p99 < 5 ms"))
    bound = dpop_api_data(stack, stack.session(), seconds, connections, threads, wrk, data["rps"])
    rows.append(("GET /api/data with DPoP (fresh proof each)", bound, bound["rps"] / c_hello["rps"], "≥ 0.60 of C hello"))
    for name, url, headers, reference, target in (
            ("GET /api/records (api-b, validated JWT)", stack.api_b + "/api/records", [bearer], c_hello, "≥ 0.85 of C hello"),
            ("GET /.well-known/jwks.json", stack.issuer + "/.well-known/jwks.json", [], static, "≥ 0.80 of nginx"),
            ("GET /.well-known/openid-configuration", stack.issuer + "/.well-known/openid-configuration", [], static,
             "≥ 0.80 of nginx"),
            ("GET /userinfo (JWT + one indexed read)", stack.issuer + "/userinfo", [bearer], c_hello, None)):
        result = wrk(url, seconds, connections, threads, headers=headers)
        rows.append((name, result, result["rps"] / reference["rps"], target))
    return rows


def start_stack(extra_env=None):
    # Sign-up open for the getting-in rows (the other rows never ask for
    # its pages); mail goes to the drop folder unless extra_env names a server.
    return Stack(extra_env={"GATEHOUSE_BENCH": "1", "GATEHOUSE_CODE_TTL": "600", "GATEHOUSE_LOGIN_RATE": "100000r/s",
                            "GATEHOUSE_TOKEN_RATE": "100000r/s", "GATEHOUSE_AUTHORIZE_RATE": "100000r/s",
                            "GATEHOUSE_SIGNUP": "open", "GATEHOUSE_SIGNUP_RATE": "100000r/s", "GATEHOUSE_RESET_RATE": "100000r/s",
                            "GATEHOUSE_SMTP_URL": "", **(extra_env or {})}).start()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--chart", metavar="PNG", help="draw throughput against the references (gnuplot)")
    parser.add_argument("--scale", action="store_true",
                        help="also fill the database (100k users, 1M refresh tokens, 1M expired codes) and compare")
    parser.add_argument("--profile", nargs="+", choices=sorted(REQUESTS), metavar="RESPONDER",
                        help="instead: instructions per request under callgrind, and where they go "
                             f"({', '.join(sorted(REQUESTS))})")
    parser.add_argument("--metrics-cost", action="store_true",
                        help="instead: /api/data counted for /metrics against a stack with GATEHOUSE_METRICS=off")
    parser.add_argument("--wellknown-ceiling", action="store_true",
                        help="instead: the JWKS as served against the same body held in nginx's memory, in a file nginx keeps open, "
                             "and against nginx `return 200`, with nginx's and wrk's CPU per request")
    parser.add_argument("--journeys", action="store_true",
                        help="instead: only the getting-in rows (sign-up and reset-request posts against the bare scrypt rate, "
                             "sign-up with the mail sender stalled against mail to the drop folder)")
    parser.add_argument("--backchannel", action="store_true",
                        help="instead: only the back-channel logout rows (refresh and logout with three back-channel clients, "
                             "the mail sender's delivery rate against the RSA signing rate)")
    parser.add_argument("--signing", action="store_true",
                        help="instead: the code exchange, the refresh grant and GET /api/data with RS256 and then ES256 tokens, "
                             "against each algorithm's signing bound (openssl speed rsa2048, ecdsap256) and the C hello-world")
    parser.add_argument("--admin", action="store_true",
                        help="instead: the admin API's GET /admin/v1/users?limit=50 with 100 users and with 100,000, "
                             "and its last page by cursor")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite",
                        help="postgresql: instead, the writing grants on SQLite and then on a private PostgreSQL "
                             "cluster, compared (with --scale, refresh again after a 1M-token fill)")
    options = parser.parse_args()
    threads, seconds, connections = 2, options.duration, options.connections
    if options.database == "postgresql":
        rows = compare(start_stack, writing_paths, lambda stack, empty: scaled_refresh(stack, empty, seconds, connections, threads),
                       seconds, connections, threads, options.scale)
        print(f"SQLite against PostgreSQL, GATEHOUSE_WORKERS={WORKERS} processes per responder on both, "
              f"best of {ROUNDS} alternated rounds")
        report(rows, [], options, threads, connections, seconds)
        return
    stack = start_stack()
    try:
        http = stack.session()
        app = App(stack, http)
        tokens = app.exchange(app.sign_in()).json()
        bearer = "Authorization: Bearer " + tokens["access_token"]
        if options.profile:
            for responder in options.profile:
                print_profile(profile(stack, responder, tokens["access_token"]))
            return
        if options.metrics_cost:
            report(metrics_cost(stack, start_stack, seconds, connections, threads, wrk), [], options, threads, connections, seconds)
            return
        if options.wellknown_ceiling:
            with PhysicalReferences(stack) as physical:
                rows = wellknown_ceiling(stack, physical, seconds, connections, threads, wrk)
            report(rows, [], options, threads, connections, seconds)
            return
        if options.journeys:
            report(journey_rows(stack, start_stack, seconds, connections, threads, wrk), [], options, threads, connections, seconds)
            return
        if options.signing:
            report(signing_rows(stack, http, seconds, connections, threads, wrk, code_exchange, refresh_grant), [], options, threads,
                   connections, seconds)
            return
        if options.admin:
            report(admin_rows(stack, http, seconds, connections, threads, wrk), [], options, threads, connections, seconds)
            return
        if options.backchannel:
            sign_rate = openssl_sign_rate(max(3, seconds // 2), 1)
            rows = [("openssl speed rsa2048, one process (reference)", {"rps": sign_rate}, None, None)]
            rows += backchannel_rows(stack, http, seconds, connections, threads, refresh_grant, sign_rate, free_port())
            report(rows, [], options, threads, connections, seconds)
            return
        rows = request_paths(stack, seconds, connections, threads, bearer)
        rows += metrics_cost(stack, start_stack, seconds, connections, threads, wrk)
        # The signing bound as issue 17 defines it: one process's RSA-2048
        # signing rate over the two signatures of every reply (access and ID
        # token). Both cores' rate is shown beside it: on two cores shared
        # with wrk and nginx no server reaches it.
        bound = openssl_sign_rate(max(3, seconds // 2), 1) / 2
        both_cores = openssl_sign_rate(max(3, seconds // 2), 2) / 2
        login_bound = scrypt_rate(max(3, seconds // 2), 2)
        rows.append(("openssl speed rsa2048, one process, ÷ 2 signatures (reference)", {"rps": bound}, None, None))
        rows.append(("openssl speed -multi 2 rsa2048 ÷ 2 signatures", {"rps": both_cores}, None, None))
        rows.append(("bare scrypt ln=13 r=8 p=10, both cores (reference)", {"rps": login_bound}, None, None))
        rows += token_paths(stack, http, app, seconds, connections, threads, bound, login_bound)
        rows += journey_rows(stack, start_stack, seconds, connections, threads, wrk)
        # Last: it disables and enables the demo user.
        rows += backchannel_rows(stack, http, seconds, connections, threads, refresh_grant, bound * 2, free_port())
        resources = resources_table(stack)
        if options.scale:
            rows += scaled_rows(stack, http, rows, seconds, connections, threads)
    finally:
        stack.remove()  # a --scale home holds half a gigabyte
    report(rows, resources, options, threads, connections, seconds)


def report(rows, resources, options, threads, connections, seconds):
    if options.chart:
        try:
            chart(rows, options.chart)
        except Exception as error:  # noqa: BLE001 (the figures matter more than the picture)
            print(f"chart not drawn: {error!r}", file=sys.stderr)
    if options.json:
        print(json.dumps({"rows": [{"endpoint": name, **result, "ratio": ratio, "target": target}
                                   for name, result, ratio, target in rows], "responders": resources}, indent=2))
        return
    print_table(rows, resources, threads, connections, seconds)


def filled(stack):
    """The scale fill, as a row of its own."""
    result = fill_database(stack)
    return (f"database filled: {result['summary']}", {"rps": result["seconds"], "unit": "s to fill"}, None, None)


def swept(stack):
    """One `ssoctl sweep` on the filled database, as a row of its own."""
    result = sweep(stack)
    return (f"ssoctl sweep: {result['summary']}", {"rps": result["seconds"], "unit": "s to sweep"}, None, None)


def scaled_refresh(stack, empty, seconds, connections, threads):
    """--database postgresql --scale: the refresh grant again after the
    fill (and the sweep of its expired codes), as a ratio of the empty
    database's figure (`empty`: name → result)."""
    http = stack.session()
    App(stack, http).sign_in()  # the SSO cookie refresh_grant's apps sign in with
    rows = [filled(stack), swept(stack)]
    refresh = refresh_grant(stack, http, seconds, connections, threads)
    name = "POST /token refresh_token (rotation)"
    rows.append((f"PostgreSQL: {name} at scale", refresh, refresh["rps"] / empty[name]["rps"], "≥ 0.80 of empty database"))
    return rows


def scaled_rows(stack, http, rows, seconds, connections, threads):
    """One sweep of the fill's million expired codes, timed; then the
    refresh grant and the full login again on the full database, as a ratio
    of the empty-database figure. The sweep comes first: while a backlog
    that size is swept it takes a quarter of the writer's time (SweepPacing),
    which is not the cost of the database's size."""
    empty = {name: result for name, result, _, _ in rows}
    scaled = [filled(stack), swept(stack)]
    refresh = refresh_grant(stack, http, seconds, connections, threads)
    name = "POST /token refresh_token (rotation)"
    scaled.append((name + " at scale", refresh, refresh["rps"] / empty[name]["rps"], "≥ 0.80 of empty database"))
    login = full_login(stack, seconds, connections)
    name = "full login: authorize → login → token (sign-ins/s)"
    scaled.append(("full login at scale (sign-ins/s)", login, login["rps"] / empty[name]["rps"], "≥ 0.80 of empty database"))
    return scaled


if __name__ == "__main__":
    main()
