"""DPoP (RFC 9449) at the issuer, through nginx with TLS: proofs made by
Python's `cryptography` (dpop_proofs.py), every refusal of §4.3, server
nonces (§8), bound codes (§10), bound refresh tokens (§5) through rotation
and the grace window, replay across the responder pool, and userinfo (§7)."""
import base64
import concurrent.futures
import hashlib
import json
import secrets

import pytest

from dpop_proofs import ProofKey, b64, token_request
from oidc_flow import App, query

SECRET = "dpop-machine-secret-" + secrets.token_hex(8)


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def signed_in(stack, http, key, scope="openid profile offline_access api:serverA", **authorize):
    """A code exchange with a DPoP proof by `key`; (response, app, nonce)."""
    app = App(stack, http, scope=scope)
    code = app.sign_in(**authorize)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri, "client_id": app.client_id,
            "code_verifier": app.verifier}
    response, nonce = token_request(http, stack.issuer, form, key)
    return response, app, nonce


def refresh(stack, http, token, key=None, nonce=None, **proof_changes):
    form = {"grant_type": "refresh_token", "refresh_token": token, "client_id": "mobile-app-001"}
    if key is None:
        return http.post(stack.issuer + "/token", data=form), nonce
    return token_request(http, stack.issuer, form, key, nonce=nonce, **proof_changes)


@pytest.fixture(scope="module")
def machine(stack):
    result = stack.ssoctl("client", "add", "dpop-job", "--grant", "client_credentials", "--scope", "api:serverA", "--secret-stdin",
                          input=SECRET + "\n")
    assert result.returncode == 0, result.stderr
    return ("dpop-job", SECRET)


def test_discovery_lists_the_proof_algorithms(stack, http):
    document = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert document["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "RS256"]


def test_a_proof_without_the_servers_nonce_gets_one_and_the_retry_gets_bound_tokens(stack, http):
    key = ProofKey()
    app = App(stack, http, scope="openid offline_access api:serverA")
    code = app.sign_in()
    url = stack.issuer + "/token"
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri, "client_id": app.client_id,
            "code_verifier": app.verifier}
    first = http.post(url, data=form, headers={"DPoP": key.proof("POST", url)})
    assert first.status_code == 400 and first.json()["error"] == "use_dpop_nonce", first.text
    nonce = first.headers["DPoP-Nonce"]
    stale = http.post(url, data=form, headers={"DPoP": key.proof("POST", url, nonce="bm90LWEtbm9uY2U")})
    assert stale.json()["error"] == "use_dpop_nonce" and stale.headers["DPoP-Nonce"] == nonce
    second = http.post(url, data=form, headers={"DPoP": key.proof("POST", url, nonce=nonce)})
    assert second.status_code == 200, second.text
    body = second.json()
    assert body["token_type"] == "DPoP"
    assert claims(body["access_token"])["cnf"] == {"jkt": key.thumbprint}
    assert second.headers["DPoP-Nonce"], "RFC 9449 §8.2: the next nonce comes with the answer"
    (bound,), = stack.query("SELECT dpop_jkt FROM refresh_tokens WHERE dpop_jkt = ?", key.thumbprint)
    assert bound == key.thumbprint, "a public client's refresh token is bound to the key (§5)"


@pytest.mark.parametrize("alg", ["EdDSA", "RS256"])
def test_every_advertised_algorithm_binds(stack, http, machine, alg):
    key = ProofKey(alg)
    response, _ = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, key, auth=machine)
    assert response.status_code == 200, response.text
    assert response.json()["token_type"] == "DPoP"
    assert claims(response.json()["access_token"])["cnf"]["jkt"] == key.thumbprint
    # RFC 9449 §6.2: introspection tells a resource server the token is bound.
    introspected = http.post(stack.issuer + "/introspect", data={"token": response.json()["access_token"]}, auth=machine).json()
    assert introspected["active"] is True and introspected["token_type"] == "DPoP"
    assert introspected["cnf"] == {"jkt": key.thumbprint}


@pytest.mark.parametrize("changes,description", [
    ({"header": {"typ": "JWT"}}, "typ must be dpop+jwt"),
    ({"header": {"alg": "none"}}, "alg is not one of"),
    ({"header": {"alg": "HS256"}}, "alg is not one of"),
    ({"header": {"alg": "ES384"}}, "alg is not one of"),
    ({"header": {"jwk": None}}, "not a well-formed JWT"),
    ({"header": {"jwk": {"kty": "EC", "crv": "P-256", "x": "AAAA", "y": "AAAA"}}}, "not a usable public key"),
    ({"corrupt": True}, "signature does not verify"),
    ({"claims": {"htm": "GET"}}, "htm is not this request's method"),
    ({"claims": {"htu": "https://evil.example/token"}}, "htu is not this request's URI"),
    ({"claims": {"htu": "https://localhost/authorize"}}, "htu is not this request's URI"),
    ({"claims": {"iat": 1_600_000_000}}, "iat is outside the accepted window"),
    ({"claims": {"iat": 4_000_000_000}}, "iat is outside the accepted window"),
    ({"claims": {"jti": None}}, "not a well-formed JWT"),
    ({"claims": {"iat": "yesterday"}}, "not a well-formed JWT"),
])
def test_every_refusal_of_a_token_request_proof_changes_nothing(stack, http, machine, changes, description):
    key = ProofKey()
    # One nonce first, so the refusal below is about the proof itself.
    _, nonce = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, key, auth=machine)
    before = stack.database_dump()
    response, _ = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, key, auth=machine, nonce=nonce, **changes)
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof", response.text
    assert description in response.json()["error_description"]
    assert stack.database_dump() == before


class KeylessProofKey(ProofKey):
    """A proof key with no private key behind it, whose signatures verify
    all the same: the Ed25519 identity point (R = identity, S = 0 verifies
    any message), or RSA with e = 1 (the "signature" is the padded hash)."""

    IDENTITY = b"\x01" + bytes(31)
    SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")

    def __init__(self, alg):
        self.alg = alg
        if alg == "EdDSA":
            self.jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64(self.IDENTITY)}
            canonical = json.dumps(self.jwk, separators=(",", ":"), sort_keys=True)
        else:
            modulus = (1 << 2047) | secrets.randbits(2047) | 1
            self.jwk = {"kty": "RSA", "n": b64(modulus.to_bytes(256, "big")), "e": b64(b"\x01")}
            canonical = json.dumps({"e": self.jwk["e"], "kty": "RSA", "n": self.jwk["n"]}, separators=(",", ":"), sort_keys=True)
        self.thumbprint = b64(hashlib.sha256(canonical.encode()).digest())

    def sign(self, data):
        if self.alg == "EdDSA":
            return self.IDENTITY + bytes(32)
        digest = self.SHA256_DIGEST_INFO + hashlib.sha256(data).digest()
        return b"\x00\x01" + b"\xff" * (256 - 3 - len(digest)) + b"\x00" + digest


@pytest.mark.parametrize("alg", ["EdDSA", "RS256"])
def test_a_proof_key_without_a_private_key_is_refused(stack, http, machine, alg):
    """Review R3: these proofs verify under OpenSSL, so they used to buy a
    token bound to a key nobody holds; the key is refused first."""
    before = stack.database_dump()
    response, _ = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, KeylessProofKey(alg), auth=machine)
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof", response.text
    assert "key" in response.json()["error_description"], response.text
    assert stack.database_dump() == before


def test_a_private_key_in_the_proof_is_refused(stack, http, machine):
    key = ProofKey()
    leaked = dict(key.jwk, d=base64.urlsafe_b64encode(b"\x01" * 32).rstrip(b"=").decode())
    response, _ = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, key, auth=machine, header={"jwk": leaked})
    assert response.json()["error"] == "invalid_dpop_proof" and "private key" in response.json()["error_description"]


def test_two_dpop_headers_are_refused(stack, http, machine):
    key = ProofKey()
    url = stack.issuer + "/token"
    both = key.proof("POST", url) + ", " + key.proof("POST", url)
    response = http.post(url, data={"grant_type": "client_credentials"}, auth=machine, headers={"DPoP": both})
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof"
    assert "exactly one DPoP header" in response.json()["error_description"]


def test_a_proof_is_accepted_once_across_every_responder_process(stack, http, machine):
    key = ProofKey()
    _, nonce = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, key, auth=machine)
    url = stack.issuer + "/token"
    proof = key.proof("POST", url, nonce=nonce)

    def send(_):
        return stack.session().post(url, data={"grant_type": "client_credentials"}, auth=machine, headers={"DPoP": proof})
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(send, range(8)))
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [400] * 7, [response.text for response in responses]
    refused = [response.json() for response in responses if response.status_code == 400]
    assert all(body["error"] == "invalid_dpop_proof" and "used before" in body["error_description"] for body in refused)


def test_a_bound_refresh_token_needs_its_key_and_keeps_it_through_rotation_and_the_grace_window(stack, http):
    key = ProofKey()
    response, _, nonce = signed_in(stack, http, key)
    refresh_token = response.json()["refresh_token"]
    without, _ = refresh(stack, http, refresh_token)
    assert without.status_code == 400 and without.json()["error"] == "invalid_dpop_proof", without.text
    other, _ = refresh(stack, http, refresh_token, key=ProofKey(), nonce=nonce)
    assert other.status_code == 400 and other.json()["error"] == "invalid_grant", other.text
    # Neither spent it nor revoked the family: the key holder refreshes.
    rotated, nonce = refresh(stack, http, refresh_token, key=key, nonce=nonce)
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["token_type"] == "DPoP" and claims(rotated.json()["access_token"])["cnf"]["jkt"] == key.thumbprint
    # A retry after a lost reply, with a new proof by the same key: the same successor.
    again, nonce = refresh(stack, http, refresh_token, key=key, nonce=nonce)
    assert again.status_code == 200 and again.json()["refresh_token"] == rotated.json()["refresh_token"]
    # The successor is bound too.
    bearer, _ = refresh(stack, http, rotated.json()["refresh_token"])
    assert bearer.json()["error"] == "invalid_dpop_proof"
    next_one, _ = refresh(stack, http, rotated.json()["refresh_token"], key=key, nonce=nonce)
    assert next_one.status_code == 200


def test_an_unbound_refresh_token_refreshed_with_a_proof_yields_a_bound_successor(stack, http):
    """Review R2. RFC 9449 §5: a public client's refresh token issued in
    answer to a request with a proof MUST be bound to its key. A family
    issued without DPoP is bound from its first refresh with a proof: the
    successor works with that key only, and a copy of the spent unbound
    token gets no bearer token in the grace window either."""
    client = "dpop-upgrade-" + secrets.token_hex(3)
    assert stack.ssoctl("client", "add", client, "--redirect-uri", "myapp:auth/callback", "--scope", "openid",
                        "--scope", "offline_access").returncode == 0
    app = App(stack, http, client_id=client, scope="openid offline_access")
    issued = app.exchange(app.sign_in())
    assert issued.status_code == 200 and issued.json()["token_type"] == "Bearer", issued.text
    unbound = issued.json()["refresh_token"]
    form = {"grant_type": "refresh_token", "client_id": client}
    key = ProofKey()
    rotated, nonce = token_request(http, stack.issuer, {**form, "refresh_token": unbound}, key)
    assert rotated.status_code == 200 and rotated.json()["token_type"] == "DPoP", rotated.text
    successor = rotated.json()["refresh_token"]
    assert stack.query("SELECT dpop_jkt FROM refresh_tokens WHERE client_id = ? AND used_at IS NULL", client) == [(key.thumbprint,)]
    # The spent unbound token, retried in the grace window without the key: no bearer token.
    copy = http.post(stack.issuer + "/token", data={**form, "refresh_token": unbound})
    assert copy.status_code == 400 and copy.json()["error"] == "invalid_dpop_proof", copy.text
    # The successor: not without a proof, not with another key.
    bearer = http.post(stack.issuer + "/token", data={**form, "refresh_token": successor})
    assert bearer.status_code == 400 and bearer.json()["error"] == "invalid_dpop_proof", bearer.text
    other, _ = token_request(http, stack.issuer, {**form, "refresh_token": successor}, ProofKey(), nonce=nonce)
    assert other.status_code == 400 and other.json()["error"] == "invalid_grant", other.text
    # The key holder's retry in the grace window gets the same bound successor.
    again, nonce = token_request(http, stack.issuer, {**form, "refresh_token": unbound}, key, nonce=nonce)
    assert again.status_code == 200 and again.json()["refresh_token"] == successor, again.text
    # Once the client is switched to --require-dpop, an unbound family is refused without a proof.
    other_app = App(stack, stack.session(), client_id=client, scope="openid offline_access")
    still_unbound = other_app.exchange(other_app.sign_in()).json()["refresh_token"]
    assert stack.ssoctl("client", "update", client, "--require-dpop").returncode == 0
    refused = http.post(stack.issuer + "/token", data={**form, "refresh_token": still_unbound})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_dpop_proof", refused.text
    bound, _ = token_request(http, stack.issuer, {**form, "refresh_token": still_unbound}, key, nonce=nonce)
    assert bound.status_code == 200 and bound.json()["token_type"] == "DPoP", bound.text


def revoke(stack, http, token, key=None, nonce=None, auth=None):
    """POST /revoke as mobile-app-001 (or with `auth`), with a proof by `key`
    when given (answering one use_dpop_nonce, as token_request does)."""
    url, form = stack.issuer + "/revoke", {"token": token} if auth else {"token": token, "client_id": "mobile-app-001"}
    if key is None:
        return http.post(url, data=form, auth=auth)
    response = http.post(url, data=form, auth=auth, headers={"DPoP": key.proof("POST", url, nonce=nonce)})
    if response.status_code == 400 and response.json().get("error") == "use_dpop_nonce":
        response = http.post(url, data=form, auth=auth, headers={"DPoP": key.proof("POST", url, nonce=response.headers["DPoP-Nonce"])})
    return response


def test_revoking_a_bound_token_takes_its_key_when_a_proof_is_sent(stack, http):
    """RFC 7009 asks only for the client: an app's sign-out without a proof
    revokes its bound tokens. A proof that is sent must be by their key,
    and nothing is revoked otherwise."""
    key = ProofKey()
    response, _, nonce = signed_in(stack, http, key)
    tokens = response.json()
    for token in (tokens["refresh_token"], tokens["access_token"]):
        other = revoke(stack, http, token, key=ProofKey(), nonce=nonce)
        assert other.status_code == 400 and other.json()["error"] == "invalid_grant", other.text
    rotated, nonce = refresh(stack, http, tokens["refresh_token"], key=key, nonce=nonce)
    assert rotated.status_code == 200, rotated.text
    with_key = revoke(stack, http, rotated.json()["refresh_token"], key=key, nonce=nonce)
    assert with_key.status_code == 200 and with_key.content == b""
    after, _ = refresh(stack, http, rotated.json()["refresh_token"], key=key, nonce=nonce)
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant", after.text
    # Signed in again (another browser): the app's sign-out without a proof revokes too.
    response, _, nonce = signed_in(stack, stack.session(), key)
    plain = revoke(stack, http, response.json()["refresh_token"])
    assert plain.status_code == 200
    after, _ = refresh(stack, http, response.json()["refresh_token"], key=key, nonce=nonce)
    assert after.status_code == 400 and after.json()["error"] == "invalid_grant", after.text


def test_a_client_that_requires_dpop_revokes_only_with_a_proof_by_the_key(stack, http):
    """A `--require-dpop` client sends a proof to /revoke as to /token: a
    copy of its token taken without the key cannot end its grant."""
    secret = "require-dpop-revoke-" + secrets.token_hex(8)
    assert stack.ssoctl("client", "add", "dpop-required-revoke", "--grant", "client_credentials", "--scope", "api:serverA",
                        "--require-dpop", "--secret-stdin", input=secret + "\n").returncode == 0
    auth, key = ("dpop-required-revoke", secret), ProofKey()
    issued, nonce = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, key, auth=auth)
    token = issued.json()["access_token"]

    def active():
        return http.post(stack.issuer + "/introspect", data={"token": token}, auth=auth).json()["active"]
    without = revoke(stack, http, token, auth=auth)
    assert without.status_code == 400 and without.json()["error"] == "invalid_dpop_proof", without.text
    other = revoke(stack, http, token, key=ProofKey(), nonce=nonce, auth=auth)
    assert other.status_code == 400 and other.json()["error"] == "invalid_grant", other.text
    assert active(), "neither revoked it"
    done = revoke(stack, http, token, key=key, nonce=nonce, auth=auth)
    assert done.status_code == 200 and not active()


def test_a_confidential_clients_refresh_token_is_not_bound(stack, http):
    secret = "dpop-confidential-" + secrets.token_hex(8)
    assert stack.ssoctl("client", "add", "dpop-web", "--redirect-uri", "https://web.example.test/cb", "--scope", "openid",
                        "--scope", "offline_access", "--secret-stdin", input=secret + "\n").returncode == 0
    key = ProofKey()
    app = App(stack, http, client_id="dpop-web", redirect_uri="https://web.example.test/cb", scope="openid offline_access")
    form = {"grant_type": "authorization_code", "code": app.sign_in(), "redirect_uri": app.redirect_uri, "code_verifier": app.verifier}
    response, _ = token_request(http, stack.issuer, form, key, auth=("dpop-web", secret))
    assert response.status_code == 200 and response.json()["token_type"] == "DPoP"
    assert stack.query("SELECT dpop_jkt FROM refresh_tokens WHERE client_id = ?", "dpop-web") == [(None,)]


def test_dpop_jkt_binds_the_code_to_the_key(stack, http):
    key = ProofKey()
    app = App(stack, http, scope="openid")
    code = app.sign_in(dpop_jkt=key.thumbprint)
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri, "client_id": app.client_id,
            "code_verifier": app.verifier}
    plain = http.post(stack.issuer + "/token", data=form)
    assert plain.status_code == 400 and plain.json()["error"] == "invalid_dpop_proof"
    other, _ = token_request(http, stack.issuer, form, ProofKey())
    assert other.status_code == 400 and other.json()["error"] == "invalid_grant"
    right, _ = token_request(http, stack.issuer, form, key)
    assert right.status_code == 200, "the refusals spent nothing"
    assert claims(right.json()["access_token"])["cnf"]["jkt"] == key.thumbprint


def test_a_malformed_dpop_jkt_is_an_error_redirect(stack, http):
    app = App(stack, http)
    response = app.authorize(dpop_jkt="not-a-thumbprint")
    assert query(response.headers["Location"])["error"] == "invalid_request"


def test_a_client_that_requires_dpop_gets_bound_tokens_only(stack, http):
    secret = "require-dpop-" + secrets.token_hex(8)
    assert stack.ssoctl("client", "add", "dpop-required", "--grant", "client_credentials", "--scope", "api:serverA", "--require-dpop",
                        "--secret-stdin", input=secret + "\n").returncode == 0
    bearer = http.post(stack.issuer + "/token", data={"grant_type": "client_credentials"}, auth=("dpop-required", secret))
    assert bearer.status_code == 400 and bearer.json()["error"] == "invalid_dpop_proof"
    bound, _ = token_request(http, stack.issuer, {"grant_type": "client_credentials"}, ProofKey(), auth=("dpop-required", secret))
    assert bound.status_code == 200 and bound.json()["token_type"] == "DPoP"


def test_userinfo_takes_a_bound_token_only_with_a_proof_by_its_key(stack, http):
    key = ProofKey()
    response, _, _ = signed_in(stack, http, key)
    token = response.json()["access_token"]
    url = stack.issuer + "/userinfo"

    def call(scheme="DPoP", proof=True, **changes):
        headers = {"Authorization": f"{scheme} {token}"}
        if proof:
            headers["DPoP"] = (changes.pop("key", key)).proof("GET", url, access_token=token, **changes)
        return http.get(url, headers=headers)
    good = call()
    assert good.status_code == 200, good.text
    assert good.json()["sub"] == claims(token)["sub"]
    cases = [
        (call(scheme="Bearer", proof=False), "invalid_token", "DPoP-bound"),
        (call(proof=False), "invalid_dpop_proof", "a DPoP proof is required"),
        (call(claims={"ath": None}), "invalid_dpop_proof", "no ath"),
        (call(claims={"ath": "AAAA"}), "invalid_dpop_proof", "ath does not match"),
        (call(claims={"htm": "POST"}), "invalid_dpop_proof", "htm"),
        (call(key=ProofKey()), "invalid_dpop_proof", "another key"),
    ]
    for refused, error, said in cases:
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"] == error and said in refused.json()["error_description"], refused.text
        challenge = refused.headers["WWW-Authenticate"]
        assert challenge.startswith('DPoP algs="ES256 EdDSA RS256", error="' + error + '"'), challenge
    # A proof is good once.
    proof = key.proof("GET", url, access_token=token)
    first = http.get(url, headers={"Authorization": "DPoP " + token, "DPoP": proof})
    replayed = http.get(url, headers={"Authorization": "DPoP " + token, "DPoP": proof})
    assert first.status_code == 200 and replayed.status_code == 401 and "used before" in replayed.json()["error_description"]


def test_an_unbound_token_is_not_accepted_under_the_dpop_scheme(stack, http):
    app = App(stack, http, scope="openid")
    token = app.exchange(app.sign_in()).json()["access_token"]
    response = http.get(stack.issuer + "/userinfo", headers={"Authorization": "DPoP " + token,
                                                             "DPoP": ProofKey().proof("GET", stack.issuer + "/userinfo", access_token=token)})
    assert response.status_code == 401 and response.json()["error"] == "invalid_token"
    assert "not DPoP-bound" in response.json()["error_description"]


def test_a_proof_at_par_binds_the_code_to_its_key(stack, http):
    """RFC 9449 §10.1: a DPoP proof sent with the pushed request binds the
    code, as dpop_jkt would; a dpop_jkt naming another key is refused."""
    key = ProofKey()
    app = App(stack, http, scope="openid")
    pushed = {"client_id": app.client_id, "redirect_uri": app.redirect_uri, "response_type": "code", "scope": "openid",
              "state": app.state, "code_challenge": app.challenge, "code_challenge_method": "S256"}
    par = stack.issuer + "/par"
    first = http.post(par, data=pushed, headers={"DPoP": key.proof("POST", par)})
    assert first.status_code == 400 and first.json()["error"] == "use_dpop_nonce", first.text
    nonce = first.headers["DPoP-Nonce"]
    mismatch = http.post(par, data=dict(pushed, dpop_jkt=ProofKey().thumbprint), headers={"DPoP": key.proof("POST", par, nonce=nonce)})
    assert mismatch.status_code == 400 and mismatch.json()["error"] == "invalid_dpop_proof"
    response = http.post(par, data=pushed, headers={"DPoP": key.proof("POST", par, nonce=nonce)})
    assert response.status_code == 201, response.text
    first_leg = http.get(stack.issuer + "/authorize", params={"client_id": app.client_id, "request_uri": response.json()["request_uri"]},
                         allow_redirects=False)
    code = app.code_from(app.login(first_leg.headers["Location"]))
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri, "client_id": app.client_id,
            "code_verifier": app.verifier}
    assert http.post(stack.issuer + "/token", data=form).json()["error"] == "invalid_dpop_proof", "bound: a proof is required"
    other, _ = token_request(http, stack.issuer, form, ProofKey())
    assert other.json()["error"] == "invalid_grant"
    bound, _ = token_request(http, stack.issuer, form, key)
    assert bound.status_code == 200 and claims(bound.json()["access_token"])["cnf"]["jkt"] == key.thumbprint
