"""`--profile fapi2`: a client held to the FAPI 2.0 Security Profile. A
bank's app signs in the way the profile asks, end to end with third-party
code (jwskate assertions, `cryptography` DPoP proofs, joserfc verifying the
ES256 tokens): its request pushed to /par with a private_key_jwt assertion
whose `aud` is the issuer as a string, PKCE S256, DPoP-bound code and
tokens, `iss` in the response. Then every non-conforming request is
refused and changes nothing, and registration refuses what the profile
rules out."""
import json
import secrets
import time
import uuid

import jwt as pyjwt
import pytest
from joserfc import jwt as joserfc_jwt
from joserfc.jwk import KeySet
from jwskate import Jwk, Jwt

from dpop_proofs import ProofKey
from oidc_flow import App, query
from test_client_authentication import ASSERTION_TYPE, readable

REDIRECT = "https://bank.example/cb"
SCOPE = "openid profile offline_access api:serverA"


def ok(result):
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def bank(stack, tmp_path_factory):
    """A FAPI 2.0 client: its id and its ES256 and RS256 signing keys (jwskate)."""
    keys = {"ES256": Jwk.generate(alg="ES256", kid="bank-es256"), "RS256": Jwk.generate(alg="RS256", kid="bank-rs256")}
    path = readable(tmp_path_factory.mktemp("fapi2"), "jwks.json",
                    json.dumps({"keys": [key.public_jwk().to_dict() for key in keys.values()]}))
    if not any(key["alg"] == "ES256" and key["state"] == "active" for key in json.loads(ok(stack.ssoctl("keys", "list", "--json")).stdout)):
        ok(stack.ssoctl("keys", "rotate", "--alg", "ES256"))
    client_id = "bank-" + secrets.token_hex(3)
    ok(stack.ssoctl("client", "add", client_id, "--redirect-uri", REDIRECT, "--scope", "openid", "--scope", "profile",
                    "--scope", "offline_access", "--scope", "api:serverA", "--auth-method", "private_key_jwt",
                    "--jwks-file", str(path), "--id-token-alg", "ES256", "--profile", "fapi2"))
    return client_id, keys


def assertion(stack, client_id, key, aud=None):
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": stack.issuer if aud is None else aud, "iat": now, "exp": now + 60,
              "jti": str(uuid.uuid4())}
    return str(Jwt.sign(claims, key, alg=key.alg))


def authenticated(stack, bank, form, alg="ES256", aud=None):
    client_id, keys = bank
    return {**form, "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion(stack, client_id, keys[alg], aud)}


def with_dpop(stack, http, bank, path, form, dpop_key, nonce=None):
    """POST with a DPoP proof and a fresh assertion, answering one
    use_dpop_nonce (RFC 9449 §8) with a new proof and a new assertion (the
    first one's jti was used). The response and the last nonce."""
    url = stack.issuer + path
    for _ in range(2):
        response = http.post(url, data=authenticated(stack, bank, form), headers={"DPoP": dpop_key.proof("POST", url, nonce=nonce)})
        if response.status_code != 400 or response.json().get("error") != "use_dpop_nonce":
            break
        nonce = response.headers["DPoP-Nonce"]
    return response, response.headers.get("DPoP-Nonce", nonce)


def push(stack, http, bank, app, dpop_key=None, **changes):
    form = query(app.authorize_url())
    form.pop("client_id")
    form.update(changes)
    form = {name: value for name, value in form.items() if value is not None}
    if dpop_key is None:
        return http.post(stack.issuer + "/par", data=authenticated(stack, bank, form))
    return with_dpop(stack, http, bank, "/par", form, dpop_key)[0]


def test_a_fapi2_client_signs_in_through_par_with_dpop_and_es256(stack, bank):
    client_id, _ = bank
    http = stack.session()
    app = App(stack, http, client_id=client_id, redirect_uri=REDIRECT, scope=SCOPE)
    dpop_key = ProofKey("ES256")
    pushed = push(stack, http, bank, app, dpop_key)
    assert pushed.status_code == 201, pushed.text
    first = http.get(stack.issuer + "/authorize", params={"client_id": client_id, "request_uri": pushed.json()["request_uri"]},
                     allow_redirects=False)
    assert first.status_code == 303, first.text
    second = app.login(first.headers["Location"])
    callback = query(second.headers["Location"])
    assert callback["iss"] == stack.issuer and callback["state"] == app.state  # RFC 9207
    form = {"grant_type": "authorization_code", "code": callback["code"], "redirect_uri": REDIRECT, "code_verifier": app.verifier}
    tokens, nonce = with_dpop(stack, http, bank, "/token", form, dpop_key)
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["token_type"] == "DPoP"
    key_set = KeySet.import_key_set(http.get(stack.issuer + "/.well-known/jwks.json").json())
    claims = joserfc_jwt.decode(body["access_token"], key_set, algorithms=["ES256"]).claims
    assert claims["cnf"]["jkt"] == dpop_key.thumbprint and claims["client_id"] == client_id
    joserfc_jwt.decode(body["id_token"], key_set, algorithms=["ES256"])
    # The refresh token is bound too: a refresh without the proof is refused.
    refresh = {"grant_type": "refresh_token", "refresh_token": body["refresh_token"]}
    bare = http.post(stack.issuer + "/token", data=authenticated(stack, bank, refresh))
    assert bare.status_code == 400 and bare.json()["error"] in ("invalid_dpop_proof", "invalid_request"), bare.text
    refreshed, _ = with_dpop(stack, http, bank, "/token", refresh, dpop_key, nonce)
    assert refreshed.status_code == 200, refreshed.text
    assert pyjwt.get_unverified_header(refreshed.json()["access_token"])["alg"] == "ES256"


def without_used_assertions(dump):
    """The dump without the dpop_proofs rows (SQLite's `INSERT INTO dpop_proofs`, PostgreSQL's `dpop_proofs: (...)`)."""
    return "\n".join(line for line in dump.splitlines() if not line.startswith(("INSERT INTO dpop_proofs ", "dpop_proofs: ")))


def test_every_non_conforming_request_is_refused_and_changes_nothing(stack, bank):
    client_id, keys = bank
    http = stack.session()
    app = App(stack, http, client_id=client_id, redirect_uri=REDIRECT, scope=SCOPE)
    before = stack.database_dump()
    # §5.3.2.2: PAR is required; a direct request goes back with invalid_request.
    direct = app.authorize()
    assert direct.status_code == 303 and query(direct.headers["Location"])["error"] == "invalid_request"
    # §5.4.1: RS256 assertions are refused (PS256, ES256, EdDSA only).
    form = query(app.authorize_url())
    form.pop("client_id")
    rs256 = http.post(stack.issuer + "/par", data=authenticated(stack, bank, form, alg="RS256"))
    assert rs256.status_code == 401 and rs256.json()["error"] == "invalid_client", rs256.text
    # §5.3.2.1: the assertion's aud is the issuer, as a string: not an array, not the endpoint.
    for aud in ([stack.issuer], stack.issuer + "/par", stack.issuer + "/token"):
        refused = http.post(stack.issuer + "/par", data=authenticated(stack, bank, form, aud=aud))
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_client", (aud, refused.text)
    # PKCE S256 (§5.3.2.2): without it, or plain, refused at push time.
    for changes in ({"code_challenge": None, "code_challenge_method": None}, {"code_challenge_method": "plain"}):
        refused = push(stack, http, bank, app, **changes)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_request", (changes, refused.text)
    # Nothing was stored but the used assertions' jti (RFC 7523 §3 replay protection, kept whatever the request's fate).
    assert without_used_assertions(stack.database_dump()) == without_used_assertions(before)
    # §5.3.2.1: sender-constrained tokens only: a code exchange without DPoP is refused.
    pushed = push(stack, http, bank, app)
    first = http.get(stack.issuer + "/authorize", params={"client_id": client_id, "request_uri": pushed.json()["request_uri"]},
                     allow_redirects=False)
    code = query(app.login(first.headers["Location"]).headers["Location"])["code"]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": app.verifier}
    bare = http.post(stack.issuer + "/token", data=authenticated(stack, bank, form))
    assert bare.status_code == 400 and bare.json()["error"] in ("invalid_dpop_proof", "invalid_request"), bare.text
    assert "access_token" not in bare.json()


def test_registration_refuses_what_the_profile_rules_out(stack, tmp_path):
    key = Jwk.generate(alg="ES256", kid="k")
    path = readable(tmp_path, "jwks.json", json.dumps({"keys": [key.public_jwk().to_dict()]}))
    base = ["client", "add", "fapi-bad-" + secrets.token_hex(3), "--redirect-uri", REDIRECT]
    cases = [
        (["--profile", "fapi2", "--id-token-alg", "ES256"], "private_key_jwt"),  # a public client
        (["--profile", "fapi2", "--auth-method", "private_key_jwt", "--jwks-file", str(path)], "--id-token-alg"),  # RS256 tokens
        (["--profile", "fapi3", "--auth-method", "private_key_jwt", "--jwks-file", str(path), "--id-token-alg", "ES256"], "fapi2"),
    ]
    for extra, named in cases:
        refused = stack.ssoctl(*base, *extra)
        assert refused.returncode != 0 and named in refused.stderr, (extra, refused.stderr)
    secret = stack.ssoctl(*base, "--profile", "fapi2", "--id-token-alg", "ES256", "--secret-stdin", input="a-long-enough-secret-123\n")
    assert secret.returncode != 0 and "private_key_jwt" in secret.stderr, secret.stderr
