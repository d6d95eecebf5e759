"""Scripts/bench: throughput and latency of Gatehouse's endpoints against their
physical references, measured in one run on one stack (ratios, not absolutes)."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from urllib.parse import quote

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "Tests", "e2e"))
from oidc_flow import App  # noqa: E402
from stack import Stack  # noqa: E402

WRK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrk")


def wrk(url, seconds, connections, threads, script="report.lua", headers=(), env=None):
    # wrk takes one script: the run's own hooks plus the shared report.
    combined = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
    for part in {script, "report.lua"}:
        combined.write(open(os.path.join(WRK, part)).read() + "\n")
    combined.close()
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "-s", combined.name]
    for header in headers:
        command += ["-H", header]
    try:
        output = subprocess.run(command + [url], capture_output=True, text=True, env=dict(os.environ, **(env or {})), timeout=seconds + 60)
    finally:
        os.unlink(combined.name)
    match = re.search(r"WRK_JSON (\{.*\})", output.stdout)
    if not match:
        raise RuntimeError(f"wrk failed: {output.stdout}\n{output.stderr}")
    return json.loads(match.group(1))


def openssl_sign_rate(seconds, processes):
    """RSA-2048 signatures per second on all cores (openssl speed)."""
    output = subprocess.run(["openssl", "speed", "-seconds", str(seconds), "-multi", str(processes), "rsa2048"],
                            capture_output=True, text=True, timeout=seconds * 4 + 60).stdout
    match = re.search(r"rsa 2048 bits\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+[\d.]+", output)
    if not match:
        raise RuntimeError("cannot parse openssl speed output:\n" + output)
    return float(match.group(1))


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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    options = parser.parse_args()
    threads = 2
    stack = Stack(extra_env={"GATEHOUSE_BENCH": "1", "GATEHOUSE_CODE_TTL": "600",
                             "GATEHOUSE_LOGIN_RATE": "100000r/s", "GATEHOUSE_TOKEN_RATE": "100000r/s", "GATEHOUSE_AUTHORIZE_RATE": "100000r/s"}).start()
    try:
        http = stack.session()
        app = App(stack, http)
        tokens = app.exchange(app.sign_in()).json()
        bearer = "Authorization: Bearer " + tokens["access_token"]
        seconds, connections = options.duration, options.connections
        rows = []
        hello = wrk(stack.api_a + "/bench/hello", seconds, connections, threads)
        rows.append(("hello-world FastCGI (reference)", hello, None, None))
        data = wrk(stack.api_a + "/api/data", seconds, connections, threads, headers=[bearer])
        rows.append(("GET /api/data (validated JWT)", data, data["rps"] / hello["rps"], "≥ 0.80 of hello"))
        for name, url in (("GET /.well-known/jwks.json", stack.issuer + "/.well-known/jwks.json"),
                          ("GET /.well-known/openid-configuration", stack.issuer + "/.well-known/openid-configuration")):
            result = wrk(url, seconds, connections, threads)
            rows.append((name, result, result["rps"] / hello["rps"], "≥ 0.90 of hello"))
        sign_rate = openssl_sign_rate(max(3, seconds // 2), 2)
        bound = sign_rate / 2  # two signatures per reply: access token and id token
        rows.append((f"openssl speed rsa2048 ÷ 2 signatures (reference)", {"rps": bound, "p50_ms": None, "p99_ms": None}, None, None))
        collected, exchange = code_exchange(stack, app, http.cookies.get("sso_session"), seconds, connections, threads)
        rows.append(("GET /authorize with SSO cookie (code issue)", collected, None, None))
        rows.append(("POST /token authorization_code", exchange, exchange["rps"] / bound, "≥ 0.60 of signing bound"))
        refresh = refresh_grant(stack, http, seconds, connections, threads)
        rows.append(("POST /token refresh_token (rotation)", refresh, refresh["rps"] / bound, "≥ 0.60 of signing bound"))
    finally:
        stack.stop()

    if options.json:
        print(json.dumps([{"endpoint": name, **result, "ratio": ratio, "target": target} for name, result, ratio, target in rows], indent=2))
        return
    print(f"\nGatehouse benchmark: wrk -t{threads} -c{options.connections} -d{options.duration}s on loopback, TLS through nginx\n")
    print(f"| {'endpoint':<46} | {'req/s':>9} | {'p50 ms':>7} | {'p99 ms':>7} | {'ratio':>6} | target |")
    print(f"|{'-' * 48}|{'-' * 11}|{'-' * 9}|{'-' * 9}|{'-' * 8}|--------|")
    for name, result, ratio, target in rows:
        p50 = f"{result['p50_ms']:.2f}" if result.get("p50_ms") is not None else "-"
        p99 = f"{result['p99_ms']:.2f}" if result.get("p99_ms") is not None else "-"
        shown = "-" if ratio is None else f"{ratio:.2f}"
        print(f"| {name:<46} | {result['rps']:>9.0f} | {p50:>7} | {p99:>7} | {shown:>6} | {target or '-'} |")


if __name__ == "__main__":
    main()
