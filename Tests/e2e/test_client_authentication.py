"""Confidential clients' authentication at /token, /par, /revoke and
/introspect, driven by requests-oauth2client (PyPI), a client library
nobody here wrote: `client_secret_post` beside `client_secret_basic`, and
`private_key_jwt` (RFC 7523 §2.2, OIDC Core §9) with ES256, PS256, RS256
and EdDSA keys registered from a file (`--jwks-file`) or published at a
URL (`--jwks-uri`, refetched for a new kid). Every refusal of RFC 7523 §3
(a key not registered, `aud`, expiry, a lifetime over 5 minutes, a
replayed `jti`, `iss` ≠ `sub`, `alg: none`, an HMAC), two methods at once
and a wrong `client_assertion_type` get 401 `invalid_client`; assertions
are built here with jwskate."""
import base64
import json
import os
import secrets
import tempfile
import time
import uuid
from http.server import BaseHTTPRequestHandler

import pytest
import requests
from jwskate import Jwk, Jwt
from requests_oauth2client import ClientSecretBasic, ClientSecretPost, OAuth2Client, PrivateKeyJwt

from listening_ports import free_port
from stack import https_server

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ALGORITHMS = ("ES256", "PS256", "RS256", "EdDSA")


def add_client(stack, *arguments, secret=None):
    """A machine client for api:serverA with a fresh id; its id."""
    client_id = "auth-" + secrets.token_hex(5)
    command = ["client", "add", client_id, "--grant", "client_credentials", "--scope", "api:serverA", *arguments]
    if secret:
        command.append("--secret-stdin")
    added = stack.ssoctl(*command, input=secret + "\n" if secret else None)
    assert added.returncode == 0, added.stderr
    return client_id


def readable(tmp_path, name, content):
    """A file ssoctl can read once it has become the home's owner (it
    leaves root before it opens anything): public keys, world-readable."""
    os.chmod(tmp_path, 0o755)
    for parent in tmp_path.parents:
        if str(parent).startswith(tempfile.gettempdir() + "/"):
            os.chmod(parent, os.stat(parent).st_mode | 0o005)
    path = tmp_path / name
    path.write_text(content)
    os.chmod(path, 0o644)
    return path


def key_client(stack, tmp_path, *keys, extra=()):
    """A private_key_jwt client whose public keys are `keys`, from a file."""
    path = readable(tmp_path, f"jwks-{uuid.uuid4().hex}.json", json.dumps({"keys": [key.public_jwk().to_dict() for key in keys]}))
    return add_client(stack, "--auth-method", "private_key_jwt", "--jwks-file", str(path), *extra)


def oauth(stack, auth):
    session = requests.Session()
    session.verify = stack.ca
    session.trust_env = False
    return OAuth2Client(stack.issuer + "/token", auth=auth, revocation_endpoint=stack.issuer + "/revoke",
                        introspection_endpoint=stack.issuer + "/introspect", session=session)


def assertion(stack, client_id, key, alg=None, **changes):
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": stack.issuer, "iat": now, "exp": now + 60, "jti": str(uuid.uuid4())}
    claims.update(changes)
    claims = {name: value for name, value in claims.items() if value is not None}
    return str(Jwt.sign(claims, key, alg=alg or key.alg))


def b64url(value):
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def token_request(stack, form, auth=None):
    return stack.session().post(stack.issuer + "/token", data={"grant_type": "client_credentials", "scope": "api:serverA", **form},
                                auth=auth)


def assert_invalid_client(response):
    assert response.status_code == 401, response.text
    assert response.json()["error"] == "invalid_client", response.text
    assert response.headers["Cache-Control"] == "no-store"


def test_discovery_names_every_method_and_algorithm(stack):
    document = stack.session().get(stack.issuer + "/.well-known/openid-configuration").json()
    assert document["token_endpoint_auth_methods_supported"] == ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]
    assert set(document["token_endpoint_auth_signing_alg_values_supported"]) == set(ALGORITHMS)
    assert "private_key_jwt" in document["introspection_endpoint_auth_methods_supported"]


def test_client_secret_post_and_basic_through_the_library(stack):
    secret = secrets.token_urlsafe(24)
    client_id = add_client(stack, secret=secret)
    for auth in (ClientSecretPost(client_id, secret), ClientSecretBasic(client_id, secret)):
        token = oauth(stack, auth).client_credentials(scope="api:serverA")
        assert token.access_token and token.token_type.lower() == "bearer"
    refused = token_request(stack, {"client_id": client_id, "client_secret": "not-the-secret-at-all"})
    assert_invalid_client(refused)
    assert "WWW-Authenticate" not in refused.headers, "no Basic challenge when Basic was not used"
    # Registered for Basic alone: the body's secret is refused.
    basic_only = add_client(stack, "--auth-method", "client_secret_basic", secret=secret)
    assert_invalid_client(token_request(stack, {"client_id": basic_only, "client_secret": secret}))
    assert oauth(stack, ClientSecretBasic(basic_only, secret)).client_credentials(scope="api:serverA").access_token


@pytest.mark.parametrize("alg", ALGORITHMS)
def test_private_key_jwt_at_token_introspect_and_revoke(stack, tmp_path, alg):
    key = Jwk.generate(alg=alg, kid=f"{alg.lower()}-1")
    client_id = key_client(stack, tmp_path, key)
    client = oauth(stack, PrivateKeyJwt(client_id, key.to_dict(), alg=alg))
    token = client.client_credentials(scope="api:serverA")
    assert token.access_token
    data = stack.session().get(stack.api_a + "/api/data", headers={"Authorization": f"Bearer {token.access_token}"})
    assert data.status_code == 200, data.text
    # Each call signs a new assertion (a new jti): introspection, then revocation.
    introspected = client.introspect_token(token.access_token)
    assert introspected["active"] is True and introspected["client_id"] == client_id
    assert client.revoke_access_token(token.access_token)
    assert client.introspect_token(token.access_token)["active"] is False


def test_private_key_jwt_at_par(stack, tmp_path):
    key = Jwk.generate(alg="ES256", kid="par-key")
    client_id = key_client(stack, tmp_path, key, extra=("--grant", "authorization_code", "--redirect-uri", "https://rp.example/cb",
                                                             "--scope", "openid"))
    form = {"client_id": client_id, "response_type": "code", "redirect_uri": "https://rp.example/cb", "scope": "openid",
            "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256",
            "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion(stack, client_id, key, aud=stack.issuer + "/par")}
    pushed = stack.session().post(stack.issuer + "/par", data=form)
    assert pushed.status_code == 201, pushed.text
    assert pushed.json()["request_uri"].startswith("urn:ietf:params:oauth:request_uri:")
    form["client_assertion"] = assertion(stack, client_id, Jwk.generate(alg="ES256", kid="par-key"))
    assert_invalid_client(stack.session().post(stack.issuer + "/par", data=form))


class KeyServer:
    """The client's JWK Set over HTTPS on loopback (the stack's certificate)."""

    def __init__(self, home):
        self.keys, self.fetches = [], 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.fetches += 1
                body = json.dumps({"keys": [key.public_jwk().to_dict() for key in server.keys]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.port = free_port()
        self.http = https_server(home, self.port, Handler)

    @property
    def url(self):
        return f"https://127.0.0.1:{self.port}/jwks.json"


def test_private_key_jwt_with_keys_at_a_url_follows_a_new_key(stack):
    server = KeyServer(stack.home)
    try:
        first = Jwk.generate(alg="ES256", kid="first")
        server.keys = [first]
        client_id = add_client(stack, "--auth-method", "private_key_jwt", "--jwks-uri", server.url)
        assert token_request(stack, {"client_assertion_type": ASSERTION_TYPE,
                                     "client_assertion": assertion(stack, client_id, first)}).status_code == 200
        # The client rotates: a new kid is fetched (at most once a second per process).
        second = Jwk.generate(alg="ES256", kid="second")
        server.keys = [first, second]
        time.sleep(1.1)
        answers = [token_request(stack, {"client_assertion_type": ASSERTION_TYPE,
                                         "client_assertion": assertion(stack, client_id, second)}).status_code for _ in range(3)]
        assert 200 in answers, answers
        # A kid nobody published is refused, and costs at most one fetch a second.
        before = server.fetches
        for _ in range(10):
            forged = Jwk.generate(alg="ES256", kid="forged-" + secrets.token_hex(3))
            assert_invalid_client(token_request(stack, {"client_assertion_type": ASSERTION_TYPE,
                                                        "client_assertion": assertion(stack, client_id, forged)}))
        assert server.fetches - before <= 4, f"{server.fetches - before} fetches for ten forged kids"
    finally:
        server.http.shutdown()


def test_every_refusal_of_rfc_7523_section_3(stack, tmp_path):
    key = Jwk.generate(alg="ES256", kid="good")
    client_id = key_client(stack, tmp_path, key)
    other_id = key_client(stack, tmp_path, Jwk.generate(alg="ES256", kid="good"))
    stranger = Jwk.generate(alg="ES256", kid="good")
    now = int(time.time())

    def sent(value, **form):
        return token_request(stack, {"client_assertion_type": ASSERTION_TYPE, "client_assertion": value, **form})

    replayed = assertion(stack, client_id, key)
    assert sent(replayed).status_code == 200
    before = stack.database_dump()
    hmac = str(Jwt.sign({"iss": client_id, "sub": client_id, "aud": stack.issuer, "exp": now + 60, "jti": "h"},
                        Jwk.from_json(json.dumps({"kty": "oct", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA", "kid": "good"})),
                        alg="HS256"))
    unsigned = ".".join([b64url({"alg": "none", "kid": "good"}),
                         b64url({"iss": client_id, "sub": client_id, "aud": stack.issuer, "exp": now + 60, "jti": "n"}), ""])
    refusals = {
        "signed by a key not registered": sent(assertion(stack, client_id, stranger)),
        "another client's key": sent(assertion(stack, client_id, key, iss=other_id, sub=other_id)),
        "aud names another server": sent(assertion(stack, client_id, key, aud="https://elsewhere.example")),
        "no aud": sent(assertion(stack, client_id, key, aud=None)),
        "expired": sent(assertion(stack, client_id, key, iat=now - 600, exp=now - 120)),
        "lives over 5 minutes": sent(assertion(stack, client_id, key, exp=now + 3600)),
        "no exp": sent(assertion(stack, client_id, key, exp=None)),
        "no jti": sent(assertion(stack, client_id, key, jti=None)),
        "replayed jti": sent(replayed),
        "iss is not sub": sent(assertion(stack, client_id, key, sub=other_id)),
        "nbf in the future": sent(assertion(stack, client_id, key, nbf=now + 600)),
        "alg none": sent(unsigned),
        "HS256": sent(hmac),
        "not a JWT": sent("not.a.jwt"),
        "wrong client_assertion_type": token_request(stack, {"client_assertion_type": "urn:example:other",
                                                             "client_assertion": assertion(stack, client_id, key)}),
        "assertion and client_secret": sent(assertion(stack, client_id, key), client_secret="a-secret-in-the-body-too"),
        "assertion and Basic": token_request(stack, {"client_assertion_type": ASSERTION_TYPE,
                                                     "client_assertion": assertion(stack, client_id, key)},
                                             auth=(client_id, "a-basic-password-too")),
    }
    for what, response in refusals.items():
        assert response.status_code == 401 and response.json()["error"] == "invalid_client", f"{what}: {response.text}"
    mismatch = sent(assertion(stack, client_id, key), client_id=other_id)
    assert mismatch.status_code == 400 and mismatch.json()["error"] == "invalid_request", mismatch.text
    assert stack.database_dump() == before, "a refused assertion changes nothing (no jti is kept)"
    # A private_key_jwt client's secret-style attempts are refused too.
    assert_invalid_client(token_request(stack, {"client_id": client_id}))
    assert_invalid_client(token_request(stack, {"client_id": client_id, "client_secret": "x" * 20}))


def test_registration_refuses_what_cannot_work(stack, tmp_path):
    private = Jwk.generate(alg="ES256", kid="private")
    path = readable(tmp_path, "private.json", json.dumps({"keys": [private.to_dict()]}))
    empty = readable(tmp_path, "empty.json", '{"keys": []}')
    for arguments, message in (
            (["--auth-method", "private_key_jwt"], "needs the client's keys"),
            (["--auth-method", "private_key_jwt", "--jwks-file", str(path)], "private key"),
            (["--auth-method", "private_key_jwt", "--jwks-file", str(empty)], "no usable signing key"),
            (["--auth-method", "private_key_jwt", "--jwks-uri", "http://127.0.0.1/jwks"], "https"),
            (["--auth-method", "client_secret_post"], "needs a secret"),
            (["--auth-method", "tls_client_auth"], "--auth-method is one of")):
        refused = stack.ssoctl("client", "add", "refused-" + secrets.token_hex(4), "--grant", "client_credentials", "--scope",
                               "api:serverA", *arguments)
        assert refused.returncode != 0 and message in refused.stderr, (arguments, refused.stderr)
