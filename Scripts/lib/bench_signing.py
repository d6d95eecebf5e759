"""Scripts/bench's signing-algorithm rows (issue 32): the same grants and
the same API call with RS256 tokens and then with ES256 tokens, in one run.

- The code exchange and the refresh grant, each reply signing two JWTs
  (access and ID token), against each algorithm's signing bound: one
  process's `openssl speed` signing rate (rsa2048, ecdsap256) over two.
- GET /api/data with an RS256 token and with an ES256 token against the C
  hello-world libfcgi responder behind a bare nginx (no Gatehouse code).
- The access tokens' sizes."""
import json

from bench_physical import PhysicalReferences
from bench_references import openssl_sign_rate
from oidc_flow import App

CLIENT = "mobile-app-001"


def use_algorithm(stack, algorithm):
    """Gives the demo app tokens of `algorithm`, making its first key if need be."""
    keys = json.loads(stack.ssoctl("keys", "list", "--json").stdout)
    if not any(key["alg"] == algorithm and key["state"] == "active" for key in keys):
        made = stack.ssoctl("keys", "rotate", "--alg", algorithm)
        if made.returncode != 0:
            raise RuntimeError(made.stderr)
    changed = stack.ssoctl("client", "update", CLIENT, "--id-token-alg", algorithm)
    if changed.returncode != 0:
        raise RuntimeError(changed.stderr)


def access_token(stack):
    app = App(stack, stack.session())
    return app.exchange(app.sign_in()).json()["access_token"]


def signing_rows(stack, http, seconds, connections, threads, wrk, code_exchange, refresh_grant):
    """(name, result, ratio, target) rows: each algorithm's grants and API call."""
    probe = max(3, seconds // 2)
    bounds = {"RS256": openssl_sign_rate(probe, 1) / 2, "ES256": openssl_sign_rate(probe, 1, "ecdsap256") / 2}
    rows = [(f"openssl speed {name}, one process, ÷ 2 signatures (reference)", {"rps": bound}, None, None)
            for name, bound in (("rsa2048", bounds["RS256"]), ("ecdsap256", bounds["ES256"]))]
    measured, tokens = {}, {}
    for algorithm in ("RS256", "ES256"):
        use_algorithm(stack, algorithm)
        app = App(stack, http)
        _, exchange = code_exchange(stack, app, http.cookies.get("sso_session"), seconds, connections, threads)
        refresh = refresh_grant(stack, http, seconds, connections, threads)
        tokens[algorithm] = access_token(stack)
        measured[algorithm] = {"exchange": exchange, "refresh": refresh}
        for name, result in ((f"POST /token authorization_code, {algorithm} tokens", exchange),
                             (f"POST /token refresh_token (rotation), {algorithm} tokens", refresh)):
            rows.append((name, result, result["rps"] / bounds[algorithm], f"against the {algorithm} signing bound"))
    for kind in ("exchange", "refresh"):
        rows.append((f"{kind}: ES256 against RS256, same run", measured["ES256"][kind],
                     measured["ES256"][kind]["rps"] / measured["RS256"][kind]["rps"], None))
    with PhysicalReferences(stack) as physical:
        c_hello = wrk(physical.hello, seconds, connections, threads)
    rows.append(("C hello-world libfcgi ×2, bare nginx (reference)", c_hello, None, None))
    for algorithm in ("RS256", "ES256"):
        data = wrk(stack.api_a + "/api/data", seconds, connections, threads, headers=["Authorization: Bearer " + tokens[algorithm]])
        rows.append((f"GET /api/data (api-a), {algorithm} token of {len(tokens[algorithm])} bytes", data,
                     data["rps"] / c_hello["rps"], "≥ 0.85 of C hello"))
    use_algorithm(stack, "RS256")
    return rows
