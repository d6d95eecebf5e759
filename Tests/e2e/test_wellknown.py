"""Discovery, JWKS and the app-link files, through nginx with TLS."""
import base64
import json
import os
import re
import secrets
import subprocess
import time

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from joserfc import jwt
from joserfc.jwk import KeySet

import database

SECURITY_HEADERS = {
    "Strict-Transport-Security": "max-age=31536000",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def test_discovery_is_complete_and_cacheable(stack, http):
    response = http.get(stack.issuer + "/.well-known/openid-configuration")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "public, max-age=300"
    for name, value in SECURITY_HEADERS.items():
        assert response.headers[name] == value
    document = response.json()
    assert document["issuer"] == stack.issuer
    assert document["jwks_uri"] == stack.issuer + "/.well-known/jwks.json"
    assert document["code_challenge_methods_supported"] == ["S256"]
    assert document["response_types_supported"] == ["code"]
    assert document["id_token_signing_alg_values_supported"] == ["RS256", "ES256", "EdDSA"]
    assert "none" in document["token_endpoint_auth_methods_supported"]
    assert document["authorization_response_iss_parameter_supported"] is True
    assert len(response.headers["X-Request-Id"]) == 32
    # Access tokens carry the user's roles; the pages are in English and German.
    assert "roles" in document["claims_supported"]
    assert document["ui_locales_supported"] == ["de", "en"]


def test_jwks_lists_the_active_key_with_every_member(stack, http):
    response = http.get(stack.issuer + "/.well-known/jwks.json")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "public, max-age=60"
    keys = response.json()["keys"]
    assert len(keys) >= 1
    assert keys[0]["alg"] == "RS256", "the active RS256 key leads"
    for key in keys:
        if key["kty"] == "RSA":
            assert set(key) == {"kid", "kty", "use", "alg", "n", "e"}
            assert (key["kty"], key["use"], key["alg"], key["e"]) == ("RSA", "sig", "RS256", "AQAB")
            assert len(base64.urlsafe_b64decode(key["n"] + "==")) == 256  # RSA-2048
        else:  # an ES256 or EdDSA key another test made (ssoctl keys rotate --alg)
            assert (key["kty"], key["crv"], key["alg"], key["use"]) in (("EC", "P-256", "ES256", "sig"), ("OKP", "Ed25519", "EdDSA", "sig"))
            assert set(key) == {"kid", "kty", "use", "alg", "crv", "x"} | ({"y"} if key["kty"] == "EC" else set())
    etag = response.headers["ETag"]
    assert http.get(stack.issuer + "/.well-known/jwks.json", headers={"If-None-Match": etag}).status_code == 304


def test_a_token_signed_with_the_issuer_key_verifies_against_the_published_jwks(stack, http):
    """The private key on disk and the JWKS served through nginx are one key pair,
    checked by another JOSE implementation (joserfc)."""
    keys = http.get(stack.issuer + "/.well-known/jwks.json").json()
    active = next(key["kid"] for key in json.loads(stack.ssoctl("keys", "list", "--json").stdout)
                  if key["alg"] == "RS256" and key["state"] == "active")
    private_key = serialization.load_pem_private_key(database.private_key_pem(stack, active), password=None)
    header = b64url(json.dumps({"alg": "RS256", "kid": active, "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"iss": stack.issuer, "sub": "alice"}).encode())
    signature = private_key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    token = f"{header}.{payload}.{b64url(signature)}"
    decoded = jwt.decode(token, KeySet.import_key_set(keys), algorithms=["RS256"])
    assert decoded.claims["sub"] == "alice"
    assert decoded.header["kid"] == active


def test_key_rotation_shows_in_jwks_without_restart(stack, http):
    def kids():
        return [key["kid"] for key in http.get(stack.issuer + "/.well-known/jwks.json").json()["keys"]]

    def within_seconds(condition):
        """nginx refreshes its copy every 2 s and reopens it within 1: a change shows within 3."""
        deadline = time.monotonic() + 4
        while not condition():
            assert time.monotonic() < deadline, kids()
            time.sleep(0.1)

    before = kids()
    # Default: published at once, signing later (the active key stays first).
    result = stack.ssoctl("keys", "rotate")
    assert result.returncode == 0, result.stderr
    pending = result.stdout.splitlines()[0].split()[-1]
    within_seconds(lambda: pending in kids())
    for _ in range(4):  # every process of the pool sees it
        assert kids()[0] == before[0] and pending in kids()
    assert "next" in [line for line in stack.ssoctl("keys", "list").stdout.splitlines() if pending in line][0]
    # --now: signs at once (an emergency rotation).
    result = stack.ssoctl("keys", "rotate", "--now")
    assert result.returncode == 0, result.stderr
    urgent = result.stdout.split()[-1]
    within_seconds(lambda: kids()[0] == urgent)
    for _ in range(4):
        assert kids()[0] == urgent and set(before) <= set(kids())
    assert stack.ssoctl("keys", "retire", urgent).returncode != 0, "the active key cannot be retired"
    assert stack.ssoctl("keys", "retire", before[0]).returncode == 0
    # Past the copy (RFC 9111 no-cache), the responder has it at once.
    fresh = http.get(stack.issuer + "/.well-known/jwks.json", headers={"Cache-Control": "no-cache"}).json()["keys"]
    assert before[0] not in [key["kid"] for key in fresh] and urgent in [key["kid"] for key in fresh]
    within_seconds(lambda: before[0] not in kids())


def test_an_emergency_rotation_never_signs_before_the_served_jwks_lists_the_key(stack, http):
    """`keys rotate --now` used to sign at once while nginx's copy of the
    JWKS (refreshed every 2 s) did not list the key yet, so a relying party
    that refetched on the unknown kid without no-cache refused valid
    tokens. Every token seen while it runs has a kid the served JWKS
    already lists, and the command returns once the key signs."""
    secret = "rotation-watch-" + secrets.token_hex(8)
    assert stack.ssoctl("client", "add", "rotation-watch", "--grant", "client_credentials", "--scope", "api:serverA",
                        "--secret-stdin", input=secret + "\n").returncode == 0

    def token_kid():
        token = http.post(stack.issuer + "/token", data={"grant_type": "client_credentials"}, auth=("rotation-watch", secret)).json()
        header = token["access_token"].split(".")[0]
        return json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]

    def served_kids():
        return {key["kid"] for key in http.get(stack.issuer + "/.well-known/jwks.json").json()["keys"]}

    old = token_kid()
    served_kids()  # nginx's copy is fresh now, and stays so for up to 2 s
    rotation = subprocess.Popen([os.path.join(os.environ["BIN_DIR"], "ssoctl"), "keys", "rotate", "--now"], env=stack.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    while rotation.poll() is None:
        kid = token_kid()
        if kid != old:
            assert kid in served_kids(), "a token signed by a key the served JWKS does not list"
            seen.add(kid)
    out, err = rotation.communicate()
    assert rotation.returncode == 0, err
    new = out.split()[-1]
    assert out.startswith(f"published {new}") and out.splitlines()[-1] == f"active key is now {new}", out
    assert seen <= {new} and token_kid() == new and new in served_kids()


def test_nginx_answers_discovery_and_jwks_from_a_short_copy(stack, http):
    """Fifty fetches in under two seconds reach each responder at most a few
    times; each answer still carries its own request id."""
    def served(endpoint):
        text = http.get(stack.ops + "/metrics").text
        pattern = r'^gatehouse_http_requests_total\{endpoint="%s",code="200"\} (\d+)$' % endpoint
        return sum(int(count) for count in re.findall(pattern, text, re.MULTILINE))

    for path, endpoint in (("/.well-known/jwks.json", "jwks"), ("/.well-known/openid-configuration", "discovery")):
        before = served(endpoint)
        started = time.monotonic()
        ids = set()
        for _ in range(50):
            response = http.get(stack.issuer + path)
            assert response.status_code == 200
            ids.add(response.headers["X-Request-Id"])
        seconds = time.monotonic() - started
        assert len(ids) == 50
        # At most one fill per 2-second window (plus one refresh in the background).
        assert served(endpoint) - before <= 2 * (int(seconds / 2) + 1), (endpoint, seconds)


def test_app_link_files_are_json_on_the_app_links_host(stack, http):
    apple = http.get(stack.app_links + "/.well-known/apple-app-site-association")
    assert apple.status_code == 200
    assert apple.headers["Content-Type"] == "application/json"
    details = apple.json()["applinks"]["details"][0]
    assert details["appIDs"] == ["ABCDE12345.com.example.gatehouse.demo"]
    android = http.get(stack.app_links + "/.well-known/assetlinks.json")
    assert android.status_code == 200
    assert android.headers["Content-Type"] == "application/json"
    statement = android.json()[0]
    assert statement["target"]["package_name"] == "com.example.gatehouse.demo"
    assert "delegate_permission/common.handle_all_urls" in statement["relation"]
    # The issuer does not serve them; the app-links host serves nothing else.
    assert http.get(stack.issuer + "/.well-known/assetlinks.json").status_code == 404
    assert http.get(stack.app_links + "/.well-known/jwks.json").status_code == 404


def test_static_pages_carry_the_page_security_policy(stack, http):
    response = http.get(stack.issuer + "/")
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy and "unsafe-inline" not in policy
