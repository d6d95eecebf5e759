"""ES256 and EdDSA signing keys beside RS256: `ssoctl keys rotate --alg`
gives each algorithm its own active key and phased rotation, the JWKS
publishes every key (kid = the RFC 7638 thumbprint, checked with joserfc),
a client registered with `--id-token-alg` gets ID and access tokens of
that algorithm, verified here with joserfc and PyJWT against the served
JWKS and accepted by api-a and api-b; discovery says which algorithms."""
import json
import secrets

import jwt as pyjwt
import pytest
from joserfc import jwt as joserfc_jwt
from joserfc.jwk import KeySet

from oidc_flow import App

REDIRECT = "myapp:auth/callback"
SCOPE = "openid profile offline_access api:serverA api:serverB"


def ok(result):
    assert result.returncode == 0, result.stderr
    return result


def keys(stack):
    return json.loads(ok(stack.ssoctl("keys", "list", "--json")).stdout)


def active(stack, alg):
    return [key for key in keys(stack) if key["alg"] == alg and key["state"] == "active"]


@pytest.fixture(scope="module")
def algorithms(stack):
    """An active ES256 and EdDSA key (the first of each signs as soon as the served JWKS lists it)."""
    for alg in ("ES256", "EdDSA"):
        if not active(stack, alg):
            ok(stack.ssoctl("keys", "rotate", "--alg", alg))
    return {alg: active(stack, alg)[0]["kid"] for alg in ("RS256", "ES256", "EdDSA")}


def client_with(stack, alg):
    client_id = f"alg-{alg.lower()}-{secrets.token_hex(3)}"
    ok(stack.ssoctl("client", "add", client_id, "--redirect-uri", REDIRECT, "--scope", "openid", "--scope", "profile",
                    "--scope", "offline_access", "--scope", "api:serverA", "--scope", "api:serverB", "--id-token-alg", alg))
    return client_id


def tokens_for(stack, http, client_id):
    """A sign-in in a browser of its own (no SSO cookie from the last one)."""
    app = App(stack, stack.session(), client_id=client_id, redirect_uri=REDIRECT, scope=SCOPE)
    response = app.exchange(app.sign_in())
    assert response.status_code == 200, response.text
    return response.json()


def served_jwks(stack, http):
    return http.get(stack.issuer + "/.well-known/jwks.json").json()


def test_each_algorithm_has_its_own_active_key_and_the_jwks_lists_all(stack, http, algorithms):
    document = served_jwks(stack, http)
    by_kid = {key["kid"]: key for key in document["keys"]}
    assert {by_kid[algorithms["RS256"]]["kty"], by_kid[algorithms["ES256"]]["kty"], by_kid[algorithms["EdDSA"]]["kty"]} == \
        {"RSA", "EC", "OKP"}
    assert by_kid[algorithms["ES256"]]["crv"] == "P-256" and by_kid[algorithms["EdDSA"]]["crv"] == "Ed25519"
    for key in document["keys"]:
        assert key["use"] == "sig" and "d" not in key
        # The kid is the key's RFC 7638 thumbprint, as a third party computes it.
        assert KeySet.import_key_set({"keys": [key]}).keys[0].thumbprint() == key["kid"]
    discovery = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert discovery["id_token_signing_alg_values_supported"] == ["RS256", "ES256", "EdDSA"]
    assert len({key["alg"] for key in keys(stack) if key["state"] == "active"}) == 3


@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
def test_a_client_of_another_algorithm_gets_tokens_of_it_and_the_apis_accept_them(stack, http, algorithms, alg):
    tokens = tokens_for(stack, http, client_with(stack, alg))
    for token in (tokens["id_token"], tokens["access_token"]):
        header = pyjwt.get_unverified_header(token)
        assert header["alg"] == alg and header["kid"] == algorithms[alg]
    # joserfc verifies the ID token against the served JWKS, with only this algorithm allowed.
    key_set = KeySet.import_key_set(served_jwks(stack, http))
    claims = joserfc_jwt.decode(tokens["id_token"], key_set, algorithms=[alg]).claims
    assert claims["iss"] == stack.issuer and claims["sub"]
    # PyJWT too, from the JWKS entry the kid names.
    jwk = next(key for key in served_jwks(stack, http)["keys"] if key["kid"] == algorithms[alg])
    access = pyjwt.decode(tokens["access_token"], pyjwt.PyJWK(jwk).key, algorithms=[alg], audience=[stack.api_a, stack.api_b])
    assert access["client_id"] and access["iss"] == stack.issuer
    for origin, path in ((stack.api_a, "/api/data"), (stack.api_b, "/api/records")):
        response = http.get(origin + path, headers={"Authorization": "Bearer " + tokens["access_token"]})
        assert response.status_code == 200, (origin, response.text)
    # The refreshed tokens keep the algorithm.
    refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": claims["aud"],
                                                         "refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.text
    for token in (refreshed.json()["access_token"], refreshed.json()["id_token"]):
        assert pyjwt.get_unverified_header(token)["alg"] == alg


def test_es256_access_tokens_are_smaller_than_rs256_ones(stack, http, algorithms):
    rs256 = tokens_for(stack, http, client_with(stack, "RS256"))["access_token"]
    es256 = tokens_for(stack, http, client_with(stack, "ES256"))["access_token"]
    assert pyjwt.get_unverified_header(rs256)["alg"] == "RS256"
    # 64 signature bytes instead of 256: 256 base64url characters fewer.
    assert len(rs256) - len(es256) >= 250, (len(rs256), len(es256))


def test_rotating_one_algorithm_leaves_the_others(stack, http, algorithms):
    before = {alg: active(stack, alg)[0]["kid"] for alg in ("RS256", "ES256", "EdDSA")}
    rotated = ok(stack.ssoctl("keys", "rotate", "--alg", "ES256", "--now"))
    assert "active key is now" in rotated.stdout
    after = {alg: active(stack, alg)[0]["kid"] for alg in ("RS256", "ES256", "EdDSA")}
    assert after["RS256"] == before["RS256"] and after["EdDSA"] == before["EdDSA"]
    assert after["ES256"] != before["ES256"]
    states = {key["kid"]: key["state"] for key in keys(stack)}
    assert states[before["ES256"]] == "published", "the superseded ES256 key stays published while its tokens live"
    assert {key["kid"] for key in served_jwks(stack, http)["keys"]} >= {before["ES256"], after["ES256"], after["RS256"]}
    tokens = tokens_for(stack, http, client_with(stack, "ES256"))
    assert pyjwt.get_unverified_header(tokens["access_token"])["kid"] == after["ES256"]
    response = http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + tokens["access_token"]})
    assert response.status_code == 200, response.text


def test_registration_refuses_what_cannot_sign(stack):
    for alg in ("HS256", "none", "PS256", "es256"):
        refused = stack.ssoctl("client", "add", "bad-alg-" + secrets.token_hex(3), "--redirect-uri", REDIRECT, "--id-token-alg", alg)
        assert refused.returncode != 0 and "--id-token-alg" in refused.stderr, (alg, refused.stderr)
    refused = stack.ssoctl("keys", "rotate", "--alg", "HS256")
    assert refused.returncode != 0 and "--alg" in refused.stderr
