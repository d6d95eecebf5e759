"""gatehouse-login, the sample native client, against the real stack: the
tool listens on a loopback port (RFC 8252 §7.3), pushes its authorization
request (RFC 9126), this test plays the browser (authorize → login page →
POST /login → the redirect to 127.0.0.1), and the tool exchanges the code,
stores the tokens, calls both APIs, refreshes and signs out."""
import base64
import contextlib
import hashlib
import http.server
import json
import os
import select
import signal
import ssl
import stat
import subprocess
import threading
import time
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from oidc_flow import query
from stack import DEMO_PASSWORD

CLIENT_ID = "mobile-app-001"  # demo client; registers http://127.0.0.1/callback


def tool_path():
    return os.path.join(os.environ["BIN_DIR"], "gatehouse-login")


def run_tool(*args, timeout=60):
    return subprocess.run([tool_path(), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def start_login(stack, store, *extra):
    """Starts `gatehouse-login login --print`; returns the process and the authorize URL it printed."""
    process = subprocess.Popen([tool_path(), "login", "--issuer", stack.issuer, "--client-id", CLIENT_ID, "--ca-file", stack.ca,
                                "--store", str(store), "--print", "--timeout", "60", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready, _, _ = select.select([process.stdout], [], [], 30)
    if not ready:
        process.kill()
        pytest.fail("gatehouse-login printed no authorize URL: " + process.communicate()[1])
    return process, process.stdout.readline().strip()


def browser_sign_in(stack, authorize_url):
    """What the system browser does: authorize, the login form, and the redirect's Location."""
    browser = stack.session()
    first = browser.get(authorize_url, allow_redirects=False)
    assert first.status_code == 303, first.text
    assert first.headers["Location"].startswith("/login.html?client_id=")
    second = browser.post(stack.issuer + "/login", allow_redirects=False,
                          data={"req": query(first.headers["Location"])["req"], "email": "alice@example.com", "password": DEMO_PASSWORD})
    assert second.status_code == 303, second.text
    return second.headers["Location"]


def loopback():
    """The browser's plain-HTTP leg to the tool (no proxy from the environment)."""
    http = requests.Session()
    http.trust_env = False
    return http


def sign_in(stack, store, *extra):
    process, url = start_login(stack, store, *extra)
    callback = browser_sign_in(stack, url)
    page = loopback().get(callback, timeout=30)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert page.status_code == 200 and "You can close this window" in page.text
    return url, callback, err


def pushed_request(stack, request_uri):
    """The parameters the tool pushed, as the issuer stored them (by the
    request_uri's SHA-256, never the URI itself)."""
    rows = stack.query("SELECT parameters FROM pushed_authorizations WHERE request_uri_hash = ?",
                       hashlib.sha256(request_uri.encode()).digest())
    assert len(rows) == 1, rows
    return dict(parse_qsl(rows[0][0], keep_blank_values=True))


def stored(store):
    with open(store) as handle:
        return json.load(handle)


def rewrite(store, **changes):
    """Edits the token file in place (O_TRUNC keeps its 0600 mode)."""
    tokens = dict(stored(store), **changes)
    descriptor = os.open(store, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(tokens, handle)


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def authorization_request(stack, url):
    """The parameters of the tool's authorization request: the URL's own, or,
    when it pushed them (RFC 9126), the pushed ones the issuer holds."""
    parameters = query(url)
    if "request_uri" not in parameters:
        return parameters
    rows = stack.query("SELECT parameters FROM pushed_authorizations WHERE request_uri_hash = ?",
                       hashlib.sha256(parameters["request_uri"].encode()).digest())
    return dict(parse_qsl(rows[0][0], keep_blank_values=True))


def thumbprint(pem):
    """RFC 7638 for the stored key, computed by Python's cryptography."""
    numbers = serialization.load_pem_private_key(pem.encode(), password=None).public_key().public_numbers()
    encode = lambda number: base64.urlsafe_b64encode(number.to_bytes(32, "big")).rstrip(b"=").decode()
    canonical = '{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}' % (encode(numbers.x), encode(numbers.y))
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def apis_take_dpop(stack):
    """Whether api-a offers the DPoP scheme (RFC 9449 §7.1) in its challenge.
    The resource servers' DPoP is built on a branch of its own; until it is
    merged they take bearer tokens only, and the API calls below sign in with
    --no-dpop. Once merged, this is always true."""
    challenges = stack.session().get(stack.api_a + "/api/data").raw.headers.getlist("WWW-Authenticate")
    return any(challenge.startswith("DPoP") for challenge in challenges)


def api_flags(stack):
    return [] if apis_take_dpop(stack) else ["--no-dpop"]


def refresh_directly(stack, refresh_token):
    return stack.session().post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": CLIENT_ID,
                                                                "refresh_token": refresh_token})


def test_login_call_refresh_logout(stack, tmp_path):
    store = tmp_path / "config" / "gatehouse-login" / "tokens.json"
    process, url = start_login(stack, store, *api_flags(stack))

    # The authorize request, pushed first (RFC 9126, discovery names /par): the
    # browser's URL holds client_id and request_uri alone; the pushed request
    # has the loopback redirect on the tool's port, PKCE S256, state and nonce.
    assert url.startswith(stack.issuer + "/authorize?")
    reference = query(url)
    assert sorted(reference) == ["client_id", "request_uri"] and reference["client_id"] == CLIENT_ID, url
    assert reference["request_uri"].startswith("urn:ietf:params:oauth:request_uri:"), url
    parameters = pushed_request(stack, reference["request_uri"])
    redirect = urlsplit(parameters["redirect_uri"])
    assert (redirect.scheme, redirect.hostname, redirect.path) == ("http", "127.0.0.1", "/callback") and redirect.port
    assert parameters["client_id"] == CLIENT_ID and parameters["code_challenge_method"] == "S256"
    assert len(parameters["code_challenge"]) == 43 and parameters["state"] and parameters["nonce"]

    callback = browser_sign_in(stack, url)
    assert callback.startswith(parameters["redirect_uri"] + "?"), callback
    # Anything but the callback path gets a 404 and the tool keeps waiting.
    assert loopback().get(f"http://127.0.0.1:{redirect.port}/favicon.ico", timeout=10).status_code == 404
    page = loopback().get(callback, timeout=30)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert page.status_code == 200 and "You can close this window" in page.text
    assert page.headers["Cache-Control"] == "no-store" and page.headers["Referrer-Policy"] == "no-referrer"
    assert "Signed in as alice@example.com" in err

    # The token file: mode 0600 in a 0700 directory, with a refresh token.
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(store.parent).st_mode) == 0o700
    assert [name for name in os.listdir(store.parent)] == ["tokens.json"], "no temporary file left behind"
    tokens = stored(store)
    assert tokens["refresh_token"] and tokens["access_token"] and tokens["id_token"]
    assert tokens["issuer"] == stack.issuer and tokens["client_id"] == CLIENT_ID and tokens["email"] == "alice@example.com"

    # status: claims and expiry, never a whole token.
    status = run_tool("status", "--store", store)
    assert status.returncode == 0, status.stderr
    assert '"email" : "alice@example.com"' in status.stdout or '"email": "alice@example.com"' in status.stdout
    assert "api:serverA" in status.stdout and "expires" in status.stdout
    for secret in (tokens["access_token"], tokens["refresh_token"], tokens["id_token"]):
        assert secret not in status.stdout + status.stderr
    shown = run_tool("status", "--store", store, "--show-tokens")
    assert tokens["refresh_token"] in shown.stdout

    # Both APIs with the stored access token.
    data = run_tool("call", stack.api_a + "/api/data", "--store", store)
    assert data.returncode == 0, data.stderr
    assert json.loads(data.stdout)["source"] == "ServerA" and json.loads(data.stdout)["user"] == "alice@example.com"
    records = run_tool("call", stack.api_b + "/api/records", "--store", store)
    assert records.returncode == 0, records.stderr
    assert json.loads(records.stdout)["source"] == "ServerB" and isinstance(json.loads(records.stdout)["records"], list)

    # refresh: the rotated refresh token replaces the stored one.
    refreshed = run_tool("refresh", "--store", store)
    assert refreshed.returncode == 0, refreshed.stderr
    after = stored(store)
    assert after["refresh_token"] != tokens["refresh_token"] and after["access_token"] != tokens["access_token"]
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert tokens["refresh_token"] not in refreshed.stderr and after["refresh_token"] not in refreshed.stderr

    # logout: revoked at the issuer, the store gone.
    logout = run_tool("logout", "--store", store)
    assert logout.returncode == 0, logout.stderr
    assert not store.exists()
    refused = refresh_directly(stack, after["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", refused.text
    userinfo = stack.session().get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + after["access_token"]})
    assert userinfo.status_code == 401, "the access token was revoked too"
    again = run_tool("status", "--store", store)
    assert again.returncode != 0 and "not signed in" in again.stderr


def test_a_refused_refresh_says_why_in_words(stack, tmp_path):
    """The issuer's `reason` beside invalid_grant, as the tool tells it."""
    store = tmp_path / "tokens.json"
    process, url = start_login(stack, store)
    loopback().get(browser_sign_in(stack, url), timeout=30)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    sid = claims(stored(store)["id_token"])["sid"]
    assert stack.ssoctl("sessions", "revoke", sid).returncode == 0
    refused = run_tool("refresh", "--store", store)
    assert refused.returncode == 1
    assert "invalid_grant" in refused.stderr and "You were signed out" in refused.stderr, refused.stderr
    assert "Sign in again with `gatehouse-login login`." in refused.stderr, refused.stderr


def test_call_refreshes_an_expired_or_refused_access_token_once(stack, tmp_path):
    store = tmp_path / "tokens.json"
    sign_in(stack, store, *api_flags(stack))

    # Expired according to the store: refreshed before the call.
    first = stored(store)
    rewrite(store, access_token_expires_at=int(time.time()) - 5)
    data = run_tool("call", stack.api_a + "/api/data", "--store", store)
    assert data.returncode == 0, data.stderr
    assert json.loads(data.stdout)["source"] == "ServerA" and "expired; refreshing" in data.stderr
    second = stored(store)
    assert second["refresh_token"] != first["refresh_token"]

    # Not expired by the clock, but the API says invalid_token: one refresh, one retry.
    header, payload, signature = second["access_token"].split(".")
    rewrite(store, access_token=header + "." + payload + "." + signature[::-1])
    data = run_tool("call", stack.api_b + "/api/records", "--store", store)
    assert data.returncode == 0, data.stderr
    assert json.loads(data.stdout)["source"] == "ServerB" and "retrying once" in data.stderr
    assert stored(store)["refresh_token"] != second["refresh_token"]

    # logout --keep-session still revokes the tool's own refresh token.
    third = stored(store)
    assert run_tool("logout", "--store", store, "--keep-session").returncode == 0
    assert refresh_directly(stack, third["refresh_token"]).json()["error"] == "invalid_grant"


def test_call_into_a_closed_pipe_ends_quietly_as_a_filter_does(stack, tmp_path):
    """`gatehouse-login call URL | head`: the reader has gone when the body
    is written. The tool ends by SIGPIPE like any filter (141 in a shell),
    with no stack trace; it used to trap (exit 132) with one."""
    store = tmp_path / "tokens.json"
    sign_in(stack, store, *api_flags(stack))
    for arguments in (["--include"], []):
        read_end, write_end = os.pipe()
        os.close(read_end)
        process = subprocess.run([tool_path(), "call", stack.api_a + "/api/data", "--store", str(store), *arguments],
                                 stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60)
        os.close(write_end)
        assert process.returncode == -signal.SIGPIPE, (process.returncode, process.stderr)
        assert "Fatal error" not in process.stderr and "Stack dump" not in process.stderr, process.stderr
        # In a shell pipeline, with head reading part of the output.
        shell = subprocess.run(["bash", "-c", 'set -o pipefail; "$0" call "$1" --store "$2" | head -c 1; echo " ${PIPESTATUS[0]}"',
                                tool_path(), stack.api_a + "/api/data", str(store)], capture_output=True, text=True, timeout=60)
        assert shell.stdout.endswith((" 0\n", " 141\n")) and "Stack dump" not in shell.stderr, (shell.stdout, shell.stderr)
    assert run_tool("logout", "--store", store).returncode == 0


def test_a_narrow_scope_gets_403_without_a_retry(stack, tmp_path):
    # A 403 (here invalid_audience: api-b is not in the token's aud) is not
    # cured by a refresh: no retry, exit 1, the error shown.
    store = tmp_path / "tokens.json"
    process, url = start_login(stack, store, "--scope", "openid offline_access api:serverA", *api_flags(stack))
    page = loopback().get(browser_sign_in(stack, url), timeout=30)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and page.status_code == 200, err
    before = stored(store)["refresh_token"]
    denied = run_tool("call", stack.api_b + "/api/records", "--store", store)
    assert denied.returncode == 1 and "(HTTP 403)" in denied.stderr and "retrying" not in denied.stderr
    assert json.loads(denied.stdout)["error"] in ("invalid_audience", "insufficient_scope")
    assert stored(store)["refresh_token"] == before, "no refresh for a 403"
    assert run_tool("logout", "--store", store).returncode == 0


# DPoP (RFC 9449): the tool's tokens are bound to a key of its own unless it is told --no-dpop.
def test_tokens_are_dpop_bound_by_default_and_call_presents_them_with_proofs(stack, tmp_path):
    store = tmp_path / "tokens.json"
    process, url = start_login(stack, store)
    jkt = authorization_request(stack, url)["dpop_jkt"]
    assert len(jkt) == 43, "RFC 9449 §10: the code is bound to the key at /authorize"
    callback = browser_sign_in(stack, url)
    page = loopback().get(callback, timeout=30)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and page.status_code == 200, err
    assert "DPoP-bound" in err and jkt in err

    # The key is kept with the tokens, in the 0600 file, and is the one they are bound to.
    tokens = stored(store)
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert tokens["token_type"] == "DPoP" and tokens["dpop_nonce"]
    assert tokens["dpop_key"].startswith("-----BEGIN PRIVATE KEY-----")
    assert thumbprint(tokens["dpop_key"]) == jkt
    assert claims(tokens["access_token"])["cnf"] == {"jkt": jkt}, "RFC 9449 §6.1"
    key_body = "".join(tokens["dpop_key"].splitlines()[1:-1])
    status = run_tool("status", "--store", store, "--show-tokens")
    assert status.returncode == 0 and "DPoP" in status.stdout and jkt in status.stdout
    for line in tokens["dpop_key"].splitlines()[1:-1]:
        assert line not in out + err + status.stdout + status.stderr, "the private key is never printed"
    assert key_body not in status.stdout

    # Copied out of the file without the key, neither token is any use.
    userinfo = stack.issuer + "/userinfo"
    bearer = stack.session().get(userinfo, headers={"Authorization": "Bearer " + tokens["access_token"]})
    assert bearer.status_code == 401 and bearer.json()["error"] == "invalid_token", bearer.text
    stolen = refresh_directly(stack, tokens["refresh_token"])
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_dpop_proof", stolen.text

    # call: Authorization: DPoP with a proof (ath) at userinfo.
    me = run_tool("call", userinfo, "--store", store)
    assert me.returncode == 0, me.stderr
    assert json.loads(me.stdout)["email"] == "alice@example.com"

    # refresh: a proof by the same key, so the rotated tokens stay bound to it.
    refreshed = run_tool("refresh", "--store", store)
    assert refreshed.returncode == 0, refreshed.stderr
    after = stored(store)
    assert after["refresh_token"] != tokens["refresh_token"] and after["token_type"] == "DPoP"
    assert claims(after["access_token"])["cnf"] == {"jkt": jkt} and after["dpop_key"] == tokens["dpop_key"]

    # A nonce that is no longer good: the issuer says use_dpop_nonce, the tool
    # answers once with the one offered and keeps it.
    rewrite(store, dpop_nonce="bm90LWEtbm9uY2U")
    again = run_tool("refresh", "--store", store)
    assert again.returncode == 0, again.stderr
    assert stored(store)["dpop_nonce"] not in ("bm90LWEtbm9uY2U", None)

    # The token refused under the DPoP scheme (invalid_token): refreshed with a proof, retried once.
    header, payload, signature = stored(store)["access_token"].split(".")
    rewrite(store, access_token=header + "." + payload + "." + signature[::-1])
    retried = run_tool("call", userinfo, "--store", store)
    assert retried.returncode == 0 and "retrying once" in retried.stderr, retried.stderr
    assert json.loads(retried.stdout)["sub"] == claims(after["access_token"])["sub"]

    # Another key in the file: the bound refresh token refuses it (invalid_grant).
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                                   serialization.NoEncryption()).decode()
    before = stored(store)
    rewrite(store, dpop_key=other)
    wrong = run_tool("refresh", "--store", store)
    assert wrong.returncode == 1 and "invalid_grant" in wrong.stderr and "not the one" in wrong.stderr, wrong.stderr
    rewrite(store, dpop_key=before["dpop_key"])
    assert run_tool("refresh", "--store", store).returncode == 0, "the refusal spent nothing"
    assert run_tool("logout", "--store", store).returncode == 0


def test_no_dpop_gives_bearer_tokens(stack, tmp_path):
    store = tmp_path / "tokens.json"
    process, url = start_login(stack, store, "--no-dpop")
    assert "dpop_jkt" not in authorization_request(stack, url)
    callback = browser_sign_in(stack, url)
    page = loopback().get(callback, timeout=30)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and page.status_code == 200, err
    tokens = stored(store)
    assert tokens["token_type"] == "Bearer" and "dpop_key" not in tokens
    assert "cnf" not in claims(tokens["access_token"])
    me = run_tool("call", stack.issuer + "/userinfo", "--store", store)
    assert me.returncode == 0 and json.loads(me.stdout)["email"] == "alice@example.com", me.stderr
    assert run_tool("refresh", "--store", store).returncode == 0
    assert stored(store)["token_type"] == "Bearer"
    assert "(none: bearer tokens)" in run_tool("status", "--store", store).stdout
    assert run_tool("logout", "--store", store).returncode == 0


def test_the_apis_take_the_tools_dpop_bound_tokens(stack, tmp_path):
    if not apis_take_dpop(stack):
        pytest.skip("api-a/api-b do not offer the DPoP scheme yet (their DPoP is on the dpop-resource-servers branch)")
    store = tmp_path / "tokens.json"
    sign_in(stack, store)
    assert stored(store)["token_type"] == "DPoP"
    data = run_tool("call", stack.api_a + "/api/data", "--store", store)
    assert data.returncode == 0 and json.loads(data.stdout)["source"] == "ServerA", data.stderr
    records = run_tool("call", stack.api_b + "/api/records", "--store", store)
    assert records.returncode == 0 and json.loads(records.stdout)["source"] == "ServerB", records.stderr
    assert run_tool("logout", "--store", store).returncode == 0


@contextlib.contextmanager
def jwks_server(stack, jwks, token_reply=None):
    """An HTTPS server on 127.0.0.1 that answers every GET with `jwks` (and,
    given `token_reply`, every POST with it, as a token endpoint); its
    certificate is the stack's own, so the tool trusts it with the same CA."""
    body = json.dumps(jwks).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.answer(body)

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.answer(json.dumps(token_reply).encode())

        def answer(self, payload):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(stack.home, "tls", "server.pem"), os.path.join(stack.home, "tls", "server.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"https://localhost:{server.server_address[1]}/jwks.json"
    finally:
        server.shutdown()
        server.server_close()


def test_the_id_token_signature_is_checked_against_the_jwks(stack, tmp_path):
    store = tmp_path / "tokens.json"
    sign_in(stack, store)
    header = stored(store)["id_token"].split(".")[0]
    kid = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]

    # The issuer's real JWKS, served from elsewhere: the refreshed ID token verifies.
    with jwks_server(stack, stack.session().get(stack.issuer + "/.well-known/jwks.json").json()) as url:
        rewrite(store, jwks_uri=url)
        assert run_tool("refresh", "--store", store).returncode == 0

    # Another RSA key under the same kid: the signature does not verify, and the tool says so.
    numbers = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_numbers()
    encode = lambda number: base64.urlsafe_b64encode(number.to_bytes((number.bit_length() + 7) // 8, "big")).rstrip(b"=").decode()
    forged = {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid, "n": encode(numbers.n), "e": encode(numbers.e)}]}
    with jwks_server(stack, forged) as url:
        rewrite(store, jwks_uri=url)
        refused = run_tool("refresh", "--store", store)
    assert refused.returncode == 1 and "signature check" in refused.stderr and "invalidSignature" in refused.stderr, refused.stderr

    # And a JWKS without that kid at all.
    forged["keys"][0]["kid"] = "some-other-key"
    with jwks_server(stack, forged) as url:
        rewrite(store, jwks_uri=url)
        refused = run_tool("refresh", "--store", store)
    assert refused.returncode == 1 and "unknownKey" in refused.stderr, refused.stderr
    assert run_tool("logout", "--store", store).returncode == 0


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.mark.parametrize("header, refused", [
    ({"typ": "JWT"}, None),
    ({}, None),
    ({"typ": "at+jwt"}, "typ is at+jwt"),
    ({"typ": "logout+jwt"}, "typ is logout+jwt"),
    ({"typ": "JWT", "crit": ["exp"]}, "crit"),
])
def test_the_id_token_check_refuses_crit_and_a_typ_other_than_jwt(stack, tmp_path, header, refused):
    """RFC 7515 §4.1.11 (crit) and RFC 8725 §3.11 (explicit typing): a
    token endpoint that answers a refresh with a validly signed JWT that is
    not an ID token, or that names a critical extension, is refused; the
    same token typed JWT is accepted, so nothing else refuses it."""
    store = tmp_path / "tokens.json"
    sign_in(stack, store, "--no-dpop")
    before = stored(store)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    encode = lambda number: b64(number.to_bytes((number.bit_length() + 7) // 8, "big"))
    jwks = {"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": "forge", "n": encode(numbers.n), "e": encode(numbers.e)}]}
    now = int(time.time())
    id_claims = {"iss": stack.issuer, "aud": CLIENT_ID, "sub": before["subject"], "iat": now, "exp": now + 300, "auth_time": now}
    signing_input = b64(json.dumps({"alg": "RS256", "kid": "forge", **header}).encode()) + "." + b64(json.dumps(id_claims).encode())
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    reply = {"access_token": before["access_token"], "token_type": "Bearer", "expires_in": 300, "refresh_token": "next",
             "id_token": signing_input + "." + b64(signature)}
    with jwks_server(stack, jwks, token_reply=reply) as url:
        rewrite(store, jwks_uri=url, token_endpoint=url.replace("/jwks.json", "/token"))
        result = run_tool("refresh", "--store", store)
    if refused is None:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 1 and refused in result.stderr and "refused" in result.stderr, result.stderr


@pytest.mark.parametrize("parameter, value, message", [
    ("state", "forged-state", "state does not match"),
    ("iss", "https://evil.example", "RFC 9207"),
])
def test_a_tampered_callback_is_refused_and_nothing_is_stored(stack, tmp_path, parameter, value, message):
    store = tmp_path / "tokens.json"
    process, url = start_login(stack, store)
    callback = browser_sign_in(stack, url)
    parameters = dict(query(callback), **{parameter: value})
    page = loopback().get(callback.split("?")[0] + "?" + urlencode(parameters), timeout=30)
    out, err = process.communicate(timeout=30)
    assert process.returncode != 0
    assert message in err and "refused" in err, err
    assert page.status_code == 400 and "Sign-in failed" in page.text
    assert not store.exists() and os.listdir(tmp_path) == []


def test_login_gives_up_after_its_timeout(stack, tmp_path):
    store = tmp_path / "tokens.json"
    started = time.monotonic()
    result = run_tool("login", "--issuer", stack.issuer, "--client-id", CLIENT_ID, "--ca-file", stack.ca, "--store", store,
                      "--timeout", "1")
    assert result.returncode != 0 and "timed out" in result.stderr
    assert time.monotonic() - started < 20
    assert result.stdout.startswith(stack.issuer + "/authorize?")
    assert not store.exists()


def test_an_untrusted_issuer_certificate_is_refused(stack, tmp_path):
    result = run_tool("login", "--issuer", stack.issuer, "--client-id", CLIENT_ID, "--store", tmp_path / "tokens.json", "--timeout", "1")
    assert result.returncode != 0 and "not trusted" in result.stderr and "--ca-file" in result.stderr
    assert result.stdout == ""
