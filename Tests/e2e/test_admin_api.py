"""The admin REST API (docs/ADMIN-API.md) through nginx with TLS against the
running stack: confidential machine clients granted gatehouse:admin (or
gatehouse:admin:read) by ssoctl get client_credentials tokens at /token and
manage users, clients, APIs, sessions and signing keys under
ISSUER/admin/v1/. Every change is seen at once by ssoctl and by the running
responders, and writes one admin_change audit line naming the calling
client; every refusal is a problem document and leaves the database as it
was; no password, secret or token reaches a log. The doc's curl block and
docs/examples/admin_api.py are run as written.

The stack is shared with other files of the worker: every name here is this
module's own (PREFIX)."""
import base64
import email
import email.policy
import json
import os
import re
import secrets
import subprocess
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from admin_api import (ABSENT, ADMIN, ADMIN_READ, Admin, admin_changes, assert_problem, audit_lines, audited,
                       challenge, client_credentials, fresh_email, fresh_password, location_of, log_texts, ok, probe,
                       refused_unchanged, register_admin_client, ssoctl_apis, ssoctl_clients, ssoctl_keys, ssoctl_sessions,
                       ssoctl_users, token_for, walk)
from dpop_proofs import ProofKey, b64, token_request
from getting_in_mail import link, text_part, token_of
from oidc_flow import App
from stack import ROOT, Stack, wait_for
from test_account_security import ACCOUNT_LIMIT, client, error_of, fresh_address, post_password, sign_in, start
from test_apis_and_machine_clients import within_seconds as polled

PREFIX = f"adm{secrets.token_hex(3)}"
# Every password and client secret given to (or made by) the API here, for the last look at the logs.
GIVEN = []


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def given(value):
    GIVEN.append(value)
    return value


def name(kind):
    return f"{PREFIX}-{kind}-{secrets.token_hex(3)}"


def within_seconds(read, condition, seconds=6):
    """test_apis_and_machine_clients' poll, with this file's longer wait."""
    return polled(read, condition, seconds=seconds)


# --- fixtures --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def writer(stack):
    """The module's admin client (gatehouse:admin): (client_id, secret)."""
    client_id = f"{PREFIX}-writer"
    return client_id, given(register_admin_client(stack, client_id))


@pytest.fixture(scope="module")
def reader_client(stack):
    client_id = f"{PREFIX}-reader"
    return client_id, given(register_admin_client(stack, client_id, ADMIN_READ))


@pytest.fixture()
def admin(stack, writer):
    """A fresh token of the writer for each test (access tokens live 15 minutes)."""
    token = token_for(stack, *writer)
    GIVEN.append(token)
    return Admin(stack, token)


@pytest.fixture()
def reader(stack, reader_client):
    return Admin(stack, token_for(stack, *reader_client))


@pytest.fixture(scope="module")
def target(stack):
    """A user and a confidential client that the refusal tests aim at: (user id, email, client_id)."""
    email_address, password = fresh_email(PREFIX), given(fresh_password())
    ok(stack.ssoctl("user", "add", email_address, "--name", "Refusal Target", "--password-stdin", input=password + "\n"))
    client_id = name("target")
    ok(stack.ssoctl("client", "add", client_id, "--redirect-uri", "https://target.example.test/cb", "--secret-stdin",
                    input=given("target-secret-" + secrets.token_hex(12)) + "\n"))
    return ssoctl_users(stack)[email_address]["sub"], email_address, client_id


def new_user(admin, password=None, **extra):
    """A user made through the API: (resource, password)."""
    password = given(password or fresh_password())
    created = admin.created("/users", {"email": fresh_email(PREFIX), "name": "Admin API Test", "password": password, **extra})
    return created.json(), password


def signed_in(stack, email_address, password):
    """A sign-in of mobile-app-001 from an address of its own: (http, app, tokens)."""
    http = client(stack, fresh_address())
    app, code = sign_in(stack, http, email_address, password)
    tokens = app.exchange(code)
    assert tokens.status_code == 200, tokens.text
    return http, app, tokens.json()


def refresh(stack, http, app, refresh_token):
    return http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                    "client_id": app.client_id})


def password_refused(stack, email_address, password):
    http = client(stack, fresh_address())
    _, login_page = start(stack, http)
    return error_of(post_password(stack, http, login_page, email_address, password)) == "invalid_credentials"


def jwks_kids(stack):
    return [key["kid"] for key in stack.session().get(stack.issuer + "/.well-known/jwks.json").json()["keys"]]


# --- who may call it -------------------------------------------------------------------

def test_the_admin_api_and_its_two_scopes_are_registered_on_first_start(stack, writer):
    apis = ssoctl_apis(stack)
    assert apis[stack.issuer + "/admin"]["scopes"] == [ADMIN, ADMIN_READ], apis
    token = token_for(stack, *writer)
    access = claims(token)
    assert access["aud"] in ([stack.issuer + "/admin"], stack.issuer + "/admin"), access
    assert access["scope"] == ADMIN and access["sub"] == access["client_id"] == writer[0], access
    before = stack.database_dump()
    removed = stack.ssoctl("api", "remove", stack.issuer + "/admin")
    assert removed.returncode == 1 and removed.stderr.startswith("ssoctl: error: "), removed.stderr
    assert "GATEHOUSE_ADMIN_API" in removed.stderr or stack.issuer + "/admin" in removed.stderr, removed.stderr
    assert stack.database_dump() == before


@pytest.mark.parametrize("args", [
    ["client", "add", "{p}-coded", "--redirect-uri", "https://coded.example.test/cb", "--scope", "openid", "--scope", ADMIN,
     "--secret-stdin"],
    ["client", "add", "{p}-coded-read", "--redirect-uri", "https://coded.example.test/cb", "--scope", ADMIN_READ, "--secret-stdin"],
    ["client", "add", "{p}-public", "--redirect-uri", "com.admin.app:/cb", "--scope", ADMIN],
    ["client", "update", "mobile-app-001", "--add-scope", ADMIN],
])
def test_ssoctl_gives_the_admin_scopes_only_to_client_credentials_clients(stack, args):
    args = [argument.replace("{p}", PREFIX) for argument in args]
    before = stack.database_dump()
    result = stack.ssoctl(*args, input=given("coded-secret-" + secrets.token_hex(10)) + "\n")
    assert result.returncode == 1, (args, result.stdout, result.stderr)
    assert result.stderr.startswith("ssoctl: error: ") and "client_credentials" in result.stderr, result.stderr
    assert stack.database_dump() == before


def test_the_api_gives_the_admin_scopes_only_to_client_credentials_clients(stack, admin):
    for scope in (ADMIN, ADMIN_READ):
        refused_unchanged(stack, lambda: admin.post("/clients", {
            "client_id": name("coded"), "redirect_uris": ["https://coded.example.test/cb"], "scopes": ["openid", scope],
            "token_endpoint_auth_method": "client_secret_basic"}), 400, "invalid-value", names=("client_credentials",))


def test_no_token_is_401_with_a_bearer_challenge_and_changes_nothing(stack):
    anonymous = Admin(stack)
    for send in (lambda: anonymous.get("/users"),
                 lambda: anonymous.post("/users", {"email": fresh_email(PREFIX), "name": "N", "password": fresh_password()})):
        response, _ = refused_unchanged(stack, send, 401)
        said = challenge(response)
        assert said.startswith("Bearer ") and f'realm="{stack.issuer}"' in said and "error=" not in said, said


def forged(stack, token):
    """The token's header and claims signed by a key that is not the issuer's."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    head, body, _ = token.split(".")
    signature = key.sign(f"{head}.{body}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{head}.{body}.{b64(signature)}"


def unsigned(token):
    head = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    return b64(json.dumps(dict(head, alg="none")).encode()) + "." + token.split(".")[1] + "."


def test_a_token_that_is_not_a_valid_admin_token_is_401_invalid_token(stack, writer):
    http = stack.session()
    api_job = name("api-job")
    api_secret = given("api-secret-" + secrets.token_hex(12))
    ok(stack.ssoctl("client", "add", api_job, "--grant", "client_credentials", "--scope", "api:serverA", "--secret-stdin",
                    input=api_secret + "\n"))
    other_audience = token_for(stack, api_job, api_secret)
    assert claims(other_audience)["aud"] == [stack.api_a]
    real = token_for(stack, *writer)
    revoked = token_for(stack, *writer)
    assert http.post(stack.issuer + "/revoke", data={"token": revoked}, auth=writer).status_code == 200
    for token in ("garbage", "x" * 43, real[:-3] + ("AAA" if not real.endswith("AAA") else "BBB"), forged(stack, real), unsigned(real),
                  other_audience, revoked):
        caller = Admin(stack, token)
        response, _ = refused_unchanged(stack, lambda: caller.post("/users", {"email": fresh_email(PREFIX), "name": "N",
                                                                              "password": fresh_password()}), 401)
        said = challenge(response)
        assert said.startswith("Bearer ") and 'error="invalid_token"' in said, (token[:20], said)
    assert Admin(stack, real).get("/users", params={"limit": 1}).status_code == 200, "the real token works"


def test_a_read_only_token_reads_and_every_write_is_403(stack, reader, target):
    user_id, _, client_id = target
    for path in ("/users", "/clients", "/apis", "/sessions", "/keys"):
        assert reader.get(path, params={"limit": 2}).status_code == 200, path
    assert reader.one(f"/users/{user_id}")[0]["id"] == user_id
    writes = [lambda: reader.post("/users", {"email": fresh_email(PREFIX), "name": "N", "password": fresh_password()}),
              lambda: reader.patch(f"/users/{user_id}", {"name": "Read Only"}),
              lambda: reader.delete(f"/users/{user_id}"),
              lambda: reader.post(f"/users/{user_id}/unlock"),
              lambda: reader.patch(f"/clients/{client_id}", {"name": "Read Only"}),
              lambda: reader.delete(f"/clients/{client_id}"),
              lambda: reader.post(f"/clients/{client_id}/secret"),
              lambda: reader.post("/apis", {"audience": "https://read-only.example.test", "scopes": [f"{PREFIX}ro:read"]}),
              lambda: reader.post("/keys/rotate", {})]
    for send in writes:
        response, _ = refused_unchanged(stack, send, 403)
        said = challenge(response)
        assert 'error="insufficient_scope"' in said and f'scope="{ADMIN}"' in said, said


def test_a_token_narrowed_to_the_read_scope_cannot_write(stack):
    both = f"{PREFIX}-both"
    secret = given(register_admin_client(stack, both, ADMIN, ADMIN_READ))
    narrowed = token_for(stack, both, secret, scope=ADMIN_READ)
    assert claims(narrowed)["scope"] == ADMIN_READ
    caller = Admin(stack, narrowed)
    assert caller.get("/users", params={"limit": 1}).status_code == 200
    response, _ = refused_unchanged(stack, lambda: caller.post("/users", {"email": fresh_email(PREFIX), "name": "N",
                                                                          "password": fresh_password()}), 403)
    assert 'error="insufficient_scope"' in challenge(response)


def test_a_users_token_is_refused_even_when_its_client_holds_the_scope(stack, admin):
    hybrid, secret = name("hybrid"), given("hybrid-secret-" + secrets.token_hex(12))
    # The rules give the admin scopes to machine clients alone: a client that
    # also signs users in may not hold them, and nothing changes.
    before = stack.database_dump()
    refused = stack.ssoctl("client", "add", hybrid, "--redirect-uri", "https://hybrid.example.test/cb", "--grant", "authorization_code",
                           "--grant", "refresh_token", "--grant", "client_credentials", "--scope", "openid", "--scope", ADMIN,
                           "--secret-stdin", input=secret + "\n")
    assert refused.returncode == 1 and "client_credentials alone" in refused.stderr, refused.stderr
    assert stack.database_dump() == before
    # Past the rules (a row written by hand, before any process has read the
    # client), the admin API itself still refuses a token that speaks for a user.
    ok(stack.ssoctl("client", "add", hybrid, "--redirect-uri", "https://hybrid.example.test/cb", "--grant", "authorization_code",
                    "--grant", "refresh_token", "--grant", "client_credentials", "--scope", "openid", "--secret-stdin", input=secret + "\n"))
    stack.execute("UPDATE clients SET scopes = ? WHERE client_id = ?", "openid " + ADMIN, hybrid)
    user, password = new_user(admin)
    http = client(stack, fresh_address())
    app = App(stack, http, client_id=hybrid, redirect_uri="https://hybrid.example.test/cb", scope=f"openid {ADMIN}")
    first = app.authorize()
    assert first.status_code == 303, first.text
    code = app.code_from(post_password(stack, http, first.headers["Location"], user["email"], password))
    exchanged = http.post(stack.issuer + "/token", auth=(hybrid, secret), data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": app.redirect_uri, "code_verifier": app.verifier})
    assert exchanged.status_code == 200, exchanged.text
    users_token = exchanged.json()["access_token"]
    access = claims(users_token)
    assert access["sub"] == user["id"] and ADMIN in access["scope"].split(), access
    assert stack.issuer + "/admin" in access["aud"], access
    caller = Admin(stack, users_token)
    for send in (lambda: caller.get("/users", params={"limit": 1}),
                 lambda: caller.post("/users", {"email": fresh_email(PREFIX), "name": "N", "password": fresh_password()})):
        response, _ = refused_unchanged(stack, send, 403)
        assert 'error="insufficient_scope"' in challenge(response), challenge(response)
    # The same client speaking for itself is an admin client.
    assert Admin(stack, token_for(stack, hybrid, secret, scope=ADMIN)).get("/users", params={"limit": 1}).status_code == 200


def test_an_admin_client_may_authenticate_with_keys_instead_of_a_secret(stack, tmp_path):
    """private_key_jwt (RFC 7523) at /token for the admin API's token, with
    jwskate (PyPI) signing the assertion."""
    from jwskate import Jwk
    from test_client_authentication import ASSERTION_TYPE, assertion, readable
    key = Jwk.generate(alg="ES256", kid="admin-key")
    keys = readable(tmp_path, "admin-jwks.json", json.dumps({"keys": [key.public_jwk().to_dict()]}))
    keyed = name("keyed")
    ok(stack.ssoctl("client", "add", keyed, "--grant", "client_credentials", "--scope", ADMIN, "--auth-method", "private_key_jwt",
                    "--jwks-file", str(keys)))
    issued = stack.session().post(stack.issuer + "/token", data={
        "grant_type": "client_credentials", "scope": ADMIN, "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": assertion(stack, keyed, key)})
    assert issued.status_code == 200, issued.text
    caller = Admin(stack, issued.json()["access_token"])
    assert caller.get("/users", params={"limit": 1}).status_code == 200
    made = caller.post("/clients", {"client_id": name("made-by-keys"), "redirect_uris": ["com.keys.app:/cb"]})
    assert made.status_code == 201, made.text
    audited(stack, keyed, "client add", made.json()["client_id"])


def test_taking_the_scope_away_stops_the_clients_live_token_at_once_and_deleting_the_client_too(stack):
    job = f"{PREFIX}-revocable"
    secret = given(register_admin_client(stack, job, ADMIN, "api:serverA"))
    token = token_for(stack, job, secret, scope=ADMIN)
    caller = Admin(stack, token)
    assert caller.get("/users", params={"limit": 1}).status_code == 200
    ok(stack.ssoctl("client", "update", job, "--remove-scope", ADMIN))
    for send in (lambda: caller.get("/users", params={"limit": 1}),
                 lambda: caller.post("/users", {"email": fresh_email(PREFIX), "name": "N", "password": fresh_password()})):
        response, _ = refused_unchanged(stack, send, 403)
        assert 'error="insufficient_scope"' in challenge(response) and f'scope="{ADMIN}"' in challenge(response)
    refused_token = client_credentials(stack, stack.session(), job, secret, scope=ADMIN)
    assert refused_token.status_code == 400 and refused_token.json()["error"] == "invalid_scope", refused_token.text
    # Given back, then the client deleted: its token is a token of no client.
    ok(stack.ssoctl("client", "update", job, "--add-scope", ADMIN))
    assert caller.get("/users", params={"limit": 1}).status_code == 200, "the scope given back"
    ok(stack.ssoctl("client", "delete", job))
    response, _ = refused_unchanged(stack, lambda: caller.get("/users", params={"limit": 1}), 401)
    assert 'error="invalid_token"' in challenge(response)


def dpop_call(stack, key, token, method, path, body=ABSENT, params=None, proof_changes=None):
    """A call under the DPoP scheme with a proof for it (htu without the
    query), answering one use_dpop_nonce as a client must."""
    url = stack.issuer + "/admin/v1" + path
    caller = Admin(stack, token, scheme="DPoP")

    def send(nonce):
        proof = key.proof(method, url, nonce=nonce, access_token=token, **(proof_changes or {}))
        return caller.call(method, path, body, params=params, headers={"DPoP": proof})
    response = send(None)
    if response.status_code == 401 and "use_dpop_nonce" in challenge(response) and "DPoP-Nonce" in response.headers:
        response = send(response.headers["DPoP-Nonce"])
    return response


def test_a_dpop_bound_token_works_under_the_dpop_scheme_and_is_refused_as_bearer(stack):
    job = f"{PREFIX}-dpop"
    secret = given(register_admin_client(stack, job, extra=("--require-dpop",)))
    key = ProofKey("ES256")
    http = stack.session()
    response, _ = token_request(http, stack.issuer, {"grant_type": "client_credentials", "scope": ADMIN}, key, auth=(job, secret))
    assert response.status_code == 200, response.text
    assert response.json()["token_type"] == "DPoP"
    token = response.json()["access_token"]
    assert claims(token)["cnf"]["jkt"] == key.thumbprint

    listed = dpop_call(stack, key, token, "GET", "/users", params={"limit": 2})
    assert listed.status_code == 200, (listed.text, challenge(listed))
    assert len(listed.json()["items"]) <= 2
    email_address = fresh_email(PREFIX)
    created = dpop_call(stack, key, token, "POST", "/users", {"email": email_address, "name": "DPoP Made",
                                                               "password": given(fresh_password())})
    assert created.status_code == 201, created.text
    assert email_address in ssoctl_users(stack)
    audited(stack, job, "user add", (email_address, created.json()["id"]))

    def write():
        return {"email": fresh_email(PREFIX), "name": "N", "password": fresh_password()}
    as_bearer = Admin(stack, token)
    refusal, _ = refused_unchanged(stack, lambda: as_bearer.post("/users", write()), 401)
    assert challenge(refusal).startswith("DPoP ") and 'error="invalid_token"' in challenge(refusal), challenge(refusal)
    without_proof = Admin(stack, token, scheme="DPoP")
    refusal, _ = refused_unchanged(stack, lambda: without_proof.post("/users", write()), 401)
    assert 'error="invalid_dpop_proof"' in challenge(refusal) or 'error="invalid_token"' in challenge(refusal), challenge(refusal)
    for changes in ({"corrupt": True}, {"claims": {"htm": "GET"}}, {"claims": {"htu": stack.issuer + "/admin/v1/clients"}},
                    {"claims": {"ath": b64(b"another token's hash, 32 bytes!")}}):
        refusal, _ = refused_unchanged(stack, lambda: dpop_call(stack, key, token, "POST", "/users", write(), proof_changes=changes), 401)
        assert 'error="invalid_dpop_proof"' in challenge(refusal), (changes, challenge(refusal))
    # A well-made proof by another key: its jti joins the replay cache
    # (RFC 9449 §11.1, whatever the outcome), and nothing else changes.
    other_key = ProofKey("ES256")
    before = without_replay_cache(stack.database_dump())
    refusal = dpop_call(stack, other_key, token, "POST", "/users", write())
    assert_problem(refusal, 401)
    assert 'error="invalid_dpop_proof"' in challenge(refusal), challenge(refusal)
    assert without_replay_cache(stack.database_dump()) == before


def without_replay_cache(dump):
    return "\n".join(line for line in dump.splitlines() if "dpop_proofs" not in line)


def test_the_admin_api_is_on_the_issuers_origin_only(stack, admin):
    assert admin.get("/users", params={"limit": 1}).status_code == 200
    for origin in (stack.api_a, stack.api_b, stack.app_links):
        response = admin.http.get(origin + "/admin/v1/users", headers={"Authorization": "Bearer " + admin.token})
        assert response.status_code == 404, (origin, response.status_code, response.text)


# --- conventions: refusals -------------------------------------------------------------

def _body_cases():
    pw = "refused-" + "p" * 12
    return [
        # (id, method, path, body or None, raw or None, status, kind, member, names)
        ("malformed json", "POST", "/users", None, '{"email": "x@example.com",', 400, "malformed-body", None, ()),
        ("an array", "POST", "/users", None, '["email"]', 400, "malformed-body", None, ()),
        ("a string to patch", "PATCH", "/users/{user}", None, '"name"', 400, "malformed-body", None, ()),
        ("not utf-8", "POST", "/users", None, b'{"email": "\xff\xfe"}', 400, "malformed-body", None, ()),
        ("unknown member", "POST", "/users", {"email": "{email}", "name": "N", "password": pw, "rolez": ["user"]}, None,
         400, "unknown-member", "rolez", ()),
        ("unknown member in patch", "PATCH", "/users/{user}", {"rolez": ["admin"]}, None, 400, "unknown-member", "rolez", ()),
        ("unknown client member", "PATCH", "/clients/{client}", {"redirect_uri": ["https://x.example.test/cb"]}, None,
         400, "unknown-member", "redirect_uri", ()),
        ("unknown rotate member", "POST", "/keys/rotate", {"algorithm": "ES256"}, None, 400, "unknown-member", "algorithm", ()),
        ("read-only sub", "POST", "/users", {"email": "{email}", "name": "N", "password": pw, "sub": "chosen"}, None,
         400, None, "sub", ()),
        ("read-only email", "PATCH", "/users/{user}", {"email": "{email}"}, None, 400, None, "email", ()),
        ("read-only type", "PATCH", "/clients/{client}", {"type": "public"}, None, 400, None, "type", ()),
        ("read-only client_id", "PATCH", "/clients/{client}", {"client_id": "renamed"}, None, 400, None, "client_id", ()),
        ("group only at creation", "PATCH", "/clients/{client}", {"native_sso_group": "demo"}, None, 400, None, "native_sso_group", ()),
        ("secret only by its operation", "PATCH", "/clients/{client}", {"client_secret": "x" * 32}, None, 400, None, "client_secret", ()),
        ("name of the wrong type", "POST", "/users", {"email": "{email}", "name": 42, "password": pw}, None, 400, "wrong-type", "name", ()),
        ("disabled as a string", "PATCH", "/users/{user}", {"disabled": "yes"}, None, 400, "wrong-type", "disabled", ()),
        ("roles as a string", "PATCH", "/users/{user}", {"roles": "admin"}, None, 400, "wrong-type", "roles", ()),
        ("remove_totp false", "PATCH", "/users/{user}", {"remove_totp": "true"}, None, 400, "wrong-type", "remove_totp", ()),
        ("require_dpop as a number", "PATCH", "/clients/{client}", {"require_dpop": 1}, None, 400, "wrong-type", "require_dpop", ()),
        ("redirect_uris of numbers", "PATCH", "/clients/{client}", {"redirect_uris": [1]}, None, 400, "wrong-type", "redirect_uris", ()),
        ("now as a string", "POST", "/keys/rotate", {"now": "yes"}, None, 400, "wrong-type", "now", ()),
        ("a short password", "POST", "/users", {"email": "{email}", "name": "N", "password": "short"}, None,
         400, "invalid-value", None, ("at least 8",)),
        ("a common password", "PATCH", "/users/{user}", {"password": "password1"}, None, 400, "invalid-value", None, ("10,000 most common",)),
        ("not an address", "POST", "/users", {"email": "not-an-address", "name": "N", "password": pw}, None,
         400, "invalid-value", None, ("not-an-address",)),
        ("an unknown scope", "POST", "/clients", {"client_id": "{new_client}", "redirect_uris": ["https://x.example.test/cb"],
                                                  "scopes": ["openid", "nope:read"]}, None, 400, "invalid-value", None, ("nope:read",)),
        ("an unknown scope in patch", "PATCH", "/clients/{client}", {"scopes": ["openid", "no-such:scope"]}, None,
         400, "invalid-value", None, ("no-such:scope",)),
        ("a grant that does not exist", "PATCH", "/clients/{client}", {"grant_types": ["password"]}, None,
         400, "invalid-value", None, ("password",)),
        ("a lifetime too long", "PATCH", "/clients/{client}", {"access_token_ttl": 999999999}, None,
         400, "invalid-value", None, ("999999999",)),
        ("a short secret", "POST", "/clients/{client}/secret", {"client_secret": "short"}, None, 400, "invalid-value", None,
         ("16 characters",)),
        ("an unknown algorithm", "POST", "/keys/rotate", {"alg": "HS256"}, None, 400, "invalid-value", None, ("HS256",)),
        ("an api owning openid", "POST", "/apis", {"audience": "https://{p}.example.test", "scopes": ["openid"]}, None,
         400, "invalid-value", None, ("openid",)),
        ("an api taking the admin scope", "POST", "/apis", {"audience": "https://{p}.example.test", "scopes": [ADMIN]}, None,
         400, "invalid-value", None, (ADMIN,)),
    ]


def fill(value, target):
    user_id, _, client_id = target
    replacements = {"{user}": user_id, "{client}": client_id, "{email}": fresh_email(PREFIX), "{new_client}": name("new"),
                    "{p}": PREFIX}
    if isinstance(value, str):
        for old, new in replacements.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [fill(item, target) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, target) for key, item in value.items()}
    return value


@pytest.mark.parametrize("case", _body_cases(), ids=[case[0] for case in _body_cases()])
def test_a_refused_body_names_what_is_wrong_and_changes_nothing(stack, admin, target, case):
    _, method, path, body, raw, status, kind, member, names = case
    path, body = fill(path, target), (ABSENT if body is None else fill(body, target))
    before = stack.database_dump()
    response = admin.call(method, path, body, raw=raw)
    if kind is None:
        # A read-only member: named, whichever of the member types says so.
        assert response.status_code == status, response.text
        problem = assert_problem(response, status, response.json()["type"].rpartition(":")[2], member=member)
        assert problem["type"] in ("urn:gatehouse:admin:unknown-member", "urn:gatehouse:admin:invalid-value",
                                   "urn:gatehouse:admin:wrong-type"), problem
    else:
        assert_problem(response, status, kind, member=member, names=names)
    assert stack.database_dump() == before


def test_a_body_over_64_kib_is_413_and_changes_nothing(stack, admin, target):
    user_id = target[0]
    huge = {"email": fresh_email(PREFIX), "name": "N" * (70 * 1024), "password": fresh_password()}
    # Refused before the API reads it (nginx's client_max_body_size), so not
    # a problem document: only the status, and nothing changed.
    for send in (lambda: admin.post("/users", huge), lambda: admin.patch(f"/users/{user_id}", {"name": "n" * (65 * 1024)})):
        before = stack.database_dump()
        assert send().status_code == 413
        assert stack.database_dump() == before, "a refused request changed the database"
    # Just under the limit is read (and refused for what it says, not for its size).
    near = admin.patch(f"/users/{user_id}", {"name": "n" * (60 * 1024)})
    assert near.status_code == 400, near.text


@pytest.mark.parametrize("method,path,content_type", [
    ("POST", "/users", "text/plain"),
    ("POST", "/users", "application/x-www-form-urlencoded"),
    ("POST", "/users", "application/merge-patch+json"),
    ("POST", "/users", None),
    ("PATCH", "/users/{user}", "text/json"),
    ("PATCH", "/clients/{client}", "multipart/form-data; boundary=x"),
    ("POST", "/keys/rotate", "application/xml"),
])
def test_a_body_of_another_content_type_is_415_and_changes_nothing(stack, admin, target, method, path, content_type):
    body = json.dumps({"email": fresh_email(PREFIX), "name": "Typed", "password": fresh_password()} if path == "/users"
                      else {"name": "Typed"} if "{" in path else {})
    refused_unchanged(stack, lambda: admin.call(method, fill(path, target), raw=body, content_type=content_type), 415)


def test_what_exists_already_is_409_conflict_and_changes_nothing(stack, admin):
    user, _ = new_user(admin)
    for email_address in ("alice@example.com", "ALICE@example.com", user["email"], user["email"].upper()):
        refused_unchanged(stack, lambda: admin.post("/users", {"email": email_address, "name": "Again", "password": fresh_password()}),
                          409, "conflict")
    refused_unchanged(stack, lambda: admin.post("/users", {"email": user["email"], "name": "Again", "invite": True}), 409, "conflict")
    refused_unchanged(stack, lambda: admin.post("/clients", {"client_id": "mobile-app-001", "redirect_uris": ["myapp:again"]}),
                      409, "conflict")
    refused_unchanged(stack, lambda: admin.post("/apis", {"audience": stack.api_a, "scopes": [f"{PREFIX}again:read"]}), 409, "conflict")


@pytest.mark.parametrize("method,path,body", [
    ("GET", "/users/no-such-user", ABSENT),
    ("PATCH", "/users/no-such-user", {"name": "Nobody"}),
    ("DELETE", "/users/no-such-user", ABSENT),
    ("POST", "/users/no-such-user/unlock", ABSENT),
    ("GET", "/clients/no-such-client", ABSENT),
    ("PATCH", "/clients/no-such-client", {"name": "Nobody"}),
    ("DELETE", "/clients/no-such-client", ABSENT),
    ("POST", "/clients/no-such-client/secret", ABSENT),
    ("GET", "/sessions/no-such-sid", ABSENT),
    ("DELETE", "/sessions/no-such-sid", ABSENT),
    ("GET", "/keys/no-such-kid", ABSENT),
    ("POST", "/keys/no-such-kid/retire", ABSENT),
    ("GET", "/nothing-here", ABSENT),
    ("GET", "/users/{user}/nothing", ABSENT),
])
def test_an_unknown_id_is_404_and_changes_nothing(stack, admin, target, method, path, body):
    refused_unchanged(stack, lambda: admin.call(method, fill(path, target), body), 404)


def test_removing_an_unknown_api_is_404_and_the_admin_api_itself_cannot_be_removed(stack, admin):
    refused_unchanged(stack, lambda: admin.delete("/apis", params={"audience": "https://nothing.example.test"}), 404)
    refused_unchanged(stack, lambda: admin.delete("/apis", params={"audience": stack.issuer + "/admin"}), 400, "invalid-value",
                      names=(stack.issuer + "/admin",))
    assert stack.issuer + "/admin" in ssoctl_apis(stack)


@pytest.mark.parametrize("path,params,names", [
    ("/users", {"limit": "0"}, "limit"),
    ("/users", {"limit": "201"}, "limit"),
    ("/users", {"limit": "-1"}, "limit"),
    ("/users", {"limit": "seven"}, "limit"),
    ("/users", {"limit": "7.5"}, "limit"),
    ("/users", {"next": "not a cursor!"}, "next"),
    ("/users", {"colour": "blue"}, "colour"),
    ("/users", {"emial": "alice@example.com"}, "emial"),
    ("/clients", {"email": "alice@example.com"}, "email"),
    ("/clients", {"limit": "1000"}, "limit"),
    ("/apis", {"user": "x"}, "user"),
    ("/sessions", {"email": "alice@example.com"}, "email"),
    ("/keys", {"next": "%%%"}, "next"),
    ("/keys", {"alg": "RS256"}, "alg"),
    ("/users/{user}", {"fields": "email"}, "fields"),
])
def test_a_bad_query_is_400_invalid_query(stack, admin, target, path, params, names):
    refused_unchanged(stack, lambda: admin.get(fill(path, target), params=params), 400, "invalid-query", names=(names,))


@pytest.mark.parametrize("method,path", [("PUT", "/users/{user}"), ("DELETE", "/users"), ("POST", "/users/{user}"),
                                         ("PUT", "/clients/{client}"), ("PATCH", "/keys"), ("DELETE", "/keys/rotate"),
                                         ("PUT", "/apis"), ("POST", "/sessions")])
def test_a_method_the_resource_does_not_have_is_405(stack, admin, target, method, path):
    response, _ = refused_unchanged(stack, lambda: admin.call(method, fill(path, target), {}), 405)
    assert response.headers.get("Allow") and method not in response.headers["Allow"], response.headers


def test_a_stale_if_match_is_412_on_patch_and_delete_and_changes_nothing(stack, admin):
    user, _ = new_user(admin)
    path = f"/users/{user['id']}"
    first, etag = admin.one(path)
    assert first == user
    patched = admin.patch(path, {"name": "Fresh Name"}, headers={"If-Match": etag})
    assert patched.status_code == 200, patched.text
    new_etag = patched.headers["ETag"]
    assert new_etag != etag and patched.json()["name"] == "Fresh Name"
    assert admin.one(path) == (patched.json(), new_etag), "GET answers the ETag PATCH gave"
    refused_unchanged(stack, lambda: admin.patch(path, {"name": "Stale Name"}, headers={"If-Match": etag}), 412)
    refused_unchanged(stack, lambda: admin.delete(path, headers={"If-Match": etag}), 412)
    refused_unchanged(stack, lambda: admin.delete(path, headers={"If-Match": '"not-an-etag"'}), 412)
    assert ssoctl_users(stack)[user["email"]]["name"] == "Fresh Name"

    client_id = name("etag")
    admin.created("/clients", {"client_id": client_id, "redirect_uris": ["com.etag.app:/cb"]})
    client_path = f"/clients/{client_id}"
    _, client_etag = admin.one(client_path)
    moved = admin.patch(client_path, {"name": "Etag App"}, headers={"If-Match": client_etag})
    assert moved.status_code == 200 and moved.headers["ETag"] != client_etag, moved.text
    refused_unchanged(stack, lambda: admin.patch(client_path, {"name": "Stale"}, headers={"If-Match": client_etag}), 412)
    refused_unchanged(stack, lambda: admin.delete(client_path, headers={"If-Match": client_etag}), 412)
    assert ssoctl_clients(stack)[client_id]["name"] == "Etag App"

    assert admin.delete(client_path, headers={"If-Match": moved.headers["ETag"]}).status_code == 204
    assert admin.delete(path, headers={"If-Match": new_etag}).status_code == 204
    assert client_id not in ssoctl_clients(stack) and user["email"] not in ssoctl_users(stack)


def test_an_encoded_slash_or_dot_in_a_path_never_reaches_another_resource(stack, admin):
    """nginx decodes %2F before routing: users/..%2Fclients%2FID would be
    clients/ID. Refused with 400 before routing, and nothing changes."""
    user, _ = new_user(admin)
    client_id = name("victim")
    admin.created("/clients", {"client_id": client_id, "redirect_uris": ["com.victim.app:/cb"]})
    for method, path in (("GET", f"/users/..%2Fclients%2F{client_id}"), ("GET", f"/users/x%2F..%2F..%2Fclients%2F{client_id}"),
                         ("DELETE", f"/sessions/..%2Fusers%2F{user['id']}"), ("DELETE", f"/sessions/%2E%2E%2fclients%2f{client_id}"),
                         ("POST", f"/clients/{client_id}%2Fsecret"), ("GET", f"/users/{user['id']}%5c"), ("GET", f"/users//{user['id']}")):
        refused_unchanged(stack, lambda: admin.call(method, path), 400)
    assert client_id in ssoctl_clients(stack) and user["email"] in ssoctl_users(stack)
    # An encoded slash in the query (an API's audience) is the query's business.
    assert admin.get("/apis", params={"audience": "https://nowhere.example/x"}).json()["items"] == []


def test_a_member_given_twice_is_refused_whichever_comes_first(stack, admin):
    user, _ = new_user(admin)
    for raw in ('{"roles":["admin"],"roles":["user"]}', '{"disabled":true,"disabled":"no"}', '{"name":"A","\\u006eame":"B"}'):
        refused_unchanged(stack, lambda: admin.patch(f"/users/{user['id']}", raw=raw), 400, "malformed-body")
    assert ssoctl_users(stack)[user["email"]]["roles"] == user["roles"]


def test_removing_an_api_honours_if_match(stack, admin):
    audience = f"https://{name('etag-api')}.example.test"
    created = admin.post("/apis", {"audience": audience, "scopes": [f"{name('etag')}:read"]})
    assert created.status_code == 201, created.text
    refused_unchanged(stack, lambda: admin.delete("/apis", params={"audience": audience}, headers={"If-Match": '"stale"'}), 412)
    removed = admin.delete("/apis", params={"audience": audience}, headers={"If-Match": created.headers["ETag"]})
    assert removed.status_code == 200 and removed.json() == {"clients_changed": []}, removed.text


# --- users -----------------------------------------------------------------------------

USER_MEMBERS = {"id", "sub", "email", "name", "roles", "disabled", "email_verified", "invitation_pending"}


def same_as_ssoctl(stack, user):
    listed = ssoctl_users(stack)[user["email"]]
    assert set(user) == USER_MEMBERS, user
    assert user["id"] == user["sub"] == listed["sub"]
    assert {key: value for key, value in user.items() if key != "id"} == listed, (user, listed)


def test_users_are_listed_in_creation_order_and_found_by_email_in_any_case(stack, admin, writer):
    first, _ = new_user(admin)
    second, _ = new_user(admin)
    everyone, _ = walk(admin, "/users", 200)
    ids = [user["id"] for user in everyone]
    assert len(ids) == len(set(ids))
    assert ids.index(first["id"]) < ids.index(second["id"]), "creation order"
    assert {user["sub"] for user in ssoctl_users(stack).values()} == set(ids), "the same users as ssoctl's"
    for user in everyone:
        assert set(user) == USER_MEMBERS, user
    found = admin.page("/users", email=first["email"].upper())
    assert found == {"items": [first], "next": None}
    assert admin.page("/users", email="nobody-" + first["email"]) == {"items": [], "next": None}
    default = admin.get("/users")
    assert default.status_code == 200 and len(default.json()["items"]) == min(50, len(ids))


def test_a_user_created_with_a_password_is_seen_by_ssoctl_and_signs_in_at_once(stack, admin, writer):
    email_address, password = fresh_email(PREFIX), given(fresh_password())
    response = admin.created("/users", {"email": email_address, "name": "Ada Admin", "password": password,
                                        "roles": ["user", "auditor"]})
    user = response.json()
    assert user["email"] == email_address and user["name"] == "Ada Admin" and user["roles"] == ["user", "auditor"]
    assert user["disabled"] is False and user["email_verified"] is True and user["invitation_pending"] is False
    assert location_of(stack, response) == stack.issuer + f"/admin/v1/users/{user['id']}"
    assert admin.one(f"/users/{user['id']}")[0] == user
    same_as_ssoctl(stack, user)
    _, _, tokens = signed_in(stack, email_address, password)
    assert claims(tokens["access_token"])["sub"] == user["id"]
    assert claims(tokens["access_token"])["roles"] == ["user", "auditor"]
    audited(stack, writer[0], "user add", (email_address, user["id"]))
    # roles default to ["user"]
    plain, _ = new_user(admin)
    assert plain["roles"] == ["user"]


def test_an_invited_user_gets_the_mail_queued_and_sets_a_password_from_it(stack, admin, writer):
    email_address = fresh_email(PREFIX + "-invited")
    response = admin.created("/users", {"email": email_address, "name": "Ivy Invited", "invite": True})
    user = response.json()
    assert user["invitation_pending"] is True and user["email_verified"] is False, user
    same_as_ssoctl(stack, user)
    audited(stack, writer[0], "user invite", (email_address, user["id"]))
    queued = [row for row in stack.rows("mail_outbox") if row["recipient"] == email_address]
    assert [row["kind"] for row in queued] == ["invitation"], queued
    # GATEHOUSE_SMTP_URL is unset: the sender writes it to the drop directory.
    row = wait_for(lambda: [row for row in stack.rows("mail_outbox") if row["recipient"] == email_address and row["sent_at"]],
                   20, "the invitation sent")[0]
    message = email.message_from_bytes(bytes(row["message"]), policy=email.policy.default)
    assert message["To"].addresses[0].addr_spec == email_address and message["Subject"] == "Your new account"
    url = link(message, stack, "/login/invitation")
    password = given(fresh_password())
    done = stack.session().post(stack.issuer + "/login/invitation", data={"token": token_of(url), "password": password,
                                                                          "confirm": password})
    assert done.status_code == 200 and "Your password is set" in done.text, done.text
    after, _ = admin.one(f"/users/{user['id']}")
    assert after["invitation_pending"] is False and after["email_verified"] is True
    signed_in(stack, email_address, password)
    assert "7 days" in text_part(message)


def test_a_user_is_renamed_and_given_roles_in_one_patch_and_the_next_sign_in_carries_them(stack, admin, writer):
    user, password = new_user(admin)
    path = f"/users/{user['id']}"
    patched = admin.patch(path, {"name": "Renée Patched", "roles": ["admin", "auditor"]}, content_type="application/merge-patch+json")
    assert patched.status_code == 200, patched.text
    assert patched.json() == dict(user, name="Renée Patched", roles=["admin", "auditor"])
    assert patched.headers["ETag"] == admin.one(path)[1]
    same_as_ssoctl(stack, patched.json())
    _, _, tokens = signed_in(stack, user["email"], password)
    assert claims(tokens["id_token"])["name"] == "Renée Patched"
    assert claims(tokens["access_token"])["roles"] == ["admin", "auditor"]
    audited(stack, writer[0], "user update", (user["email"], user["id"]))
    roles_only = admin.patch(path, {"roles": ["user"]})
    assert roles_only.json()["name"] == "Renée Patched" and roles_only.json()["roles"] == ["user"], "the rest is kept"


def test_disabling_a_user_ends_its_sessions_and_sign_ins_until_enabled(stack, admin, writer):
    user, password = new_user(admin)
    http, app, tokens = signed_in(stack, user["email"], password)
    disabled = admin.patch(f"/users/{user['id']}", {"disabled": True})
    assert disabled.status_code == 200 and disabled.json()["disabled"] is True, disabled.text
    assert ssoctl_users(stack)[user["email"]]["disabled"] is True
    refused = refresh(stack, http, app, tokens["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", "its refresh tokens revoked at once"
    assert all(session["state"] != "active" for session in ssoctl_sessions(stack, user["email"]).values())
    assert password_refused(stack, user["email"], password), "a disabled user cannot sign in"
    audited(stack, writer[0], "user disable", (user["email"], user["id"]))
    enabled = admin.patch(f"/users/{user['id']}", {"disabled": False})
    assert enabled.status_code == 200 and enabled.json()["disabled"] is False
    signed_in(stack, user["email"], password)
    audited(stack, writer[0], "user enable", (user["email"], user["id"]))


def test_a_new_password_ends_every_session_and_only_it_signs_in(stack, admin, writer):
    user, old_password = new_user(admin)
    http, app, tokens = signed_in(stack, user["email"], old_password)
    new_password = given(fresh_password())
    changed = admin.patch(f"/users/{user['id']}", {"password": new_password})
    assert changed.status_code == 200 and set(changed.json()) == USER_MEMBERS, changed.text
    assert "password" not in changed.text and new_password not in changed.text
    assert refresh(stack, http, app, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert all(session["state"] == "ended" for session in ssoctl_sessions(stack, user["email"]).values())
    assert password_refused(stack, user["email"], old_password)
    signed_in(stack, user["email"], new_password)
    assert stack.database_dump().count(new_password) == 0
    line = audited(stack, writer[0], "user passwd", (user["email"], user["id"]))
    assert new_password not in json.dumps(line)


def test_remove_totp_lets_the_user_sign_in_with_the_password_only(stack, admin, writer):
    user, password = new_user(admin)
    ok(stack.ssoctl("user", "totp", user["email"]))
    http = client(stack, fresh_address())
    _, login_page = start(stack, http)
    asked = post_password(stack, http, login_page, user["email"], password)
    assert asked.headers["Location"].startswith("/login-otp.html?req="), "a code is asked"
    removed = admin.patch(f"/users/{user['id']}", {"remove_totp": True})
    assert removed.status_code == 200, removed.text
    user_row = stack.query("SELECT id FROM users WHERE email = ?", user["email"])[0][0]
    assert stack.query("SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_row) == [(0,)]
    _, _, tokens = signed_in(stack, user["email"], password)
    assert claims(tokens["id_token"])["amr"] == ["pwd"]
    audited(stack, writer[0], "user totp remove", (user["email"], user["id"]))


def test_a_deleted_user_is_gone_for_ssoctl_and_its_tokens_stop_at_once(stack, admin, writer):
    user, password = new_user(admin)
    http, app, tokens = signed_in(stack, user["email"], password)
    deleted = admin.delete(f"/users/{user['id']}")
    assert deleted.status_code == 204 and deleted.content == b"", deleted.text
    assert user["email"] not in ssoctl_users(stack)
    assert refresh(stack, http, app, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    assert http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]}).status_code == 401
    assert password_refused(stack, user["email"], password)
    assert_problem(admin.get(f"/users/{user['id']}"), 404)
    audited(stack, writer[0], "user delete", (user["email"], user["id"]))


def test_unlock_clears_the_failed_sign_in_lock_at_once(stack, admin, writer):
    user, password = new_user(admin)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    for _ in range(ACCOUNT_LIMIT):
        assert error_of(post_password(stack, http, login_page, user["email"], "wrong " + password)) == "invalid_credentials"
    assert error_of(post_password(stack, http, login_page, user["email"], password)) == "too_many_attempts"
    unlocked = admin.post(f"/users/{user['id']}/unlock")
    assert unlocked.status_code == 200 and unlocked.json() == {"was_locked": True}, unlocked.text
    assert app.code_from(post_password(stack, http, login_page, user["email"], password)), "signs in at once"
    again = admin.post(f"/users/{user['id']}/unlock", {})
    assert again.status_code == 200 and again.json() == {"was_locked": False}
    lines = [line for line in admin_changes(stack, writer[0]) if line["reason"] == "user unlock"
             and line["target"] in (user["email"], user["id"])]
    assert len(lines) in (1, 2), lines


# --- clients ---------------------------------------------------------------------------

CLIENT_MEMBERS = {"client_id", "name", "type", "grant_types", "scopes", "redirect_uris", "post_logout_redirect_uris", "native_sso_group",
                  "require_dpop", "require_par", "access_token_ttl", "refresh_token_ttl", "ios_app_id", "android_package",
                  "android_cert_fingerprints", "backchannel_logout_uri", "token_endpoint_auth_method", "jwks_uri", "jwks_kids",
                  "require_signed_request_object", "id_token_signed_response_alg", "profile"}


def test_clients_are_listed_by_client_id_as_ssoctl_shows_them(stack, admin):
    admin.created("/clients", {"client_id": name("listed"), "redirect_uris": ["com.listed.app:/cb"]})
    everyone, _ = walk(admin, "/clients", 200)
    ids = [item["client_id"] for item in everyone]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    listed = ssoctl_clients(stack)
    assert {item["client_id"]: item for item in everyone} == listed, "each client as ssoctl client list --json shows it"
    assert not [item for item in everyone if "client_secret" in item or "secret_hash" in item]
    assert "$scrypt$" not in json.dumps(everyone), "never a secret's hash"


def test_a_client_created_with_a_made_secret_gets_a_token_with_it_at_once(stack, admin, writer):
    client_id = name("machine")
    response = admin.created("/clients", {"client_id": client_id, "name": "Made Secret", "grant_types": ["client_credentials"],
                                          "scopes": ["api:serverA"], "token_endpoint_auth_method": "client_secret_basic",
                                          "access_token_ttl": 120})
    body = response.json()
    secret = given(body.pop("client_secret"))
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", secret), "32 random bytes, base64url"
    assert set(body) == CLIENT_MEMBERS and body["type"] == "confidential", body
    assert body == ssoctl_clients(stack)[client_id]
    assert location_of(stack, response) == stack.issuer + f"/admin/v1/clients/{client_id}"
    shown, _ = admin.one(f"/clients/{client_id}")
    assert shown == body and "client_secret" not in shown
    token = client_credentials(stack, stack.session(), client_id, secret)
    assert token.status_code == 200 and token.json()["expires_in"] == 120, token.text
    data = stack.session().get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + token.json()["access_token"]})
    assert data.status_code == 200 and data.json()["user"] == client_id
    assert secret not in stack.database_dump()
    audited(stack, writer[0], "client add", client_id)
    # A given secret is kept, and not shown back.
    given_secret = given("given-secret-" + secrets.token_hex(12))
    own = admin.created("/clients", {"client_id": name("given"), "grant_types": ["client_credentials"], "scopes": ["api:serverB"],
                                     "client_secret": given_secret})
    assert "client_secret" not in own.json() and own.json()["type"] == "confidential"
    assert client_credentials(stack, stack.session(), own.json()["client_id"], given_secret).status_code == 200


def test_a_patch_replaces_whole_lists_and_null_resets_a_setting(stack, admin, writer):
    client_id = name("patched")
    created = admin.created("/clients", {
        "client_id": client_id, "name": "Before", "redirect_uris": ["com.team.app:/cb", "com.team.app:/old"],
        "post_logout_redirect_uris": ["com.team.app:/bye"], "scopes": ["openid", "offline_access", "api:serverA", "api:serverB"],
        "access_token_ttl": 120, "require_par": True}).json()
    assert created["access_token_ttl"] == 120 and created["require_par"] is True
    app = App(stack, stack.session(), client_id=client_id, redirect_uri="com.team.app:/new", scope="openid")
    assert app.authorize().status_code == 400, "not registered yet"
    patched = admin.patch(f"/clients/{client_id}", {
        "redirect_uris": ["com.team.app:/cb", "com.team.app:/new"], "scopes": ["openid", "offline_access", "api:serverA"],
        "access_token_ttl": None, "name": None, "require_par": False, "post_logout_redirect_uris": []})
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert body["redirect_uris"] == ["com.team.app:/cb", "com.team.app:/new"]
    assert body["scopes"] == ["openid", "offline_access", "api:serverA"]
    assert body["access_token_ttl"] is None and body["name"] is None and body["require_par"] is False
    assert body["post_logout_redirect_uris"] == []
    assert body == ssoctl_clients(stack)[client_id] == admin.one(f"/clients/{client_id}")[0]
    # The running responders at once: the new redirect URI signs in, the old one is unknown, the scope is gone.
    assert app.authorize().status_code == 303
    assert App(stack, stack.session(), client_id=client_id, redirect_uri="com.team.app:/old", scope="openid").authorize().status_code == 400
    http = client(stack, fresh_address())
    asked = App(stack, http, client_id=client_id, redirect_uri="com.team.app:/cb", scope="openid api:serverB").authorize()
    assert "error=invalid_scope" in asked.headers["Location"], asked.headers
    audited(stack, writer[0], "client update", client_id)


def test_a_null_lifetime_returns_to_the_issuers_at_once(stack, admin):
    client_id = name("ttl")
    secret = given("ttl-secret-" + secrets.token_hex(12))
    admin.created("/clients", {"client_id": client_id, "grant_types": ["client_credentials"], "scopes": ["api:serverA"],
                               "client_secret": secret, "access_token_ttl": 120})
    assert client_credentials(stack, stack.session(), client_id, secret).json()["expires_in"] == 120
    assert admin.patch(f"/clients/{client_id}", {"access_token_ttl": None}).json()["access_token_ttl"] is None
    assert client_credentials(stack, stack.session(), client_id, secret).json()["expires_in"] > 120


def test_a_deleted_client_and_what_was_issued_to_it_stop_at_once(stack, admin, writer):
    client_id = name("deleted")
    secret = admin.created("/clients", {"client_id": client_id, "grant_types": ["client_credentials"], "scopes": ["api:serverA"],
                                        "token_endpoint_auth_method": "client_secret_post"}).json()["client_secret"]
    given(secret)
    token = stack.session().post(stack.issuer + "/token", data={"grant_type": "client_credentials", "client_id": client_id,
                                                               "client_secret": secret})
    assert token.status_code == 200, token.text
    access = token.json()["access_token"]
    assert stack.session().get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + access}).status_code == 200
    assert admin.delete(f"/clients/{client_id}").status_code == 204
    assert client_id not in ssoctl_clients(stack)
    gone = stack.session().post(stack.issuer + "/token", data={"grant_type": "client_credentials", "client_id": client_id,
                                                              "client_secret": secret})
    assert gone.status_code == 401 and gone.json()["error"] == "invalid_client"
    introspector, introspector_secret = name("introspector"), given("intro-secret-" + secrets.token_hex(12))
    ok(stack.ssoctl("client", "add", introspector, "--redirect-uri", "https://rs.example/cb", "--secret-stdin",
                    input=introspector_secret + "\n"))
    assert stack.session().post(stack.issuer + "/introspect", data={"token": access},
                                auth=(introspector, introspector_secret)).json() == {"active": False}
    assert_problem(admin.get(f"/clients/{client_id}"), 404)
    audited(stack, writer[0], "client delete", client_id)


def test_a_secret_is_replaced_given_or_made_and_the_old_one_stops_at_once(stack, admin, writer):
    client_id = name("rotating")
    first = given("first-secret-" + secrets.token_hex(12))
    admin.created("/clients", {"client_id": client_id, "grant_types": ["client_credentials"], "scopes": ["api:serverB"],
                               "client_secret": first})
    http = stack.session()
    assert client_credentials(stack, http, client_id, first).status_code == 200
    second = given("second-secret-" + secrets.token_hex(12))
    set_one = admin.post(f"/clients/{client_id}/secret", {"client_secret": second})
    assert set_one.status_code == 204 and set_one.content == b"", set_one.text
    assert client_credentials(stack, http, client_id, first).status_code == 401
    assert client_credentials(stack, http, client_id, second).status_code == 200
    made = admin.post(f"/clients/{client_id}/secret")
    assert made.status_code == 200, made.text
    third = given(made.json()["client_secret"])
    assert set(made.json()) <= {"client_id", "client_secret"} and made.json().get("client_id", client_id) == client_id, made.json()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", third), "32 random bytes, base64url"
    assert client_credentials(stack, http, client_id, second).status_code == 401
    assert client_credentials(stack, http, client_id, third).status_code == 200
    made_again = admin.post(f"/clients/{client_id}/secret", {})
    assert made_again.status_code == 200, made_again.text
    fourth = given(made_again.json()["client_secret"])
    assert fourth != third
    assert client_credentials(stack, http, client_id, third).status_code == 401
    assert client_credentials(stack, http, client_id, fourth).status_code == 200
    lines = [line for line in admin_changes(stack, writer[0]) if line["reason"] == "client secret" and line["target"] == client_id]
    assert len(lines) == 3, lines
    refused_unchanged(stack, lambda: admin.post("/clients/mobile-app-001/secret", {"client_secret": "x" * 32}), 400, "invalid-value",
                      names=("mobile-app-001",))


# --- APIs ------------------------------------------------------------------------------

def test_an_api_is_added_listed_and_removed_taking_its_scopes_from_clients(stack, admin, writer):
    audience, scope = f"https://{PREFIX}-orders.example.test", f"{PREFIX}orders:read"
    response = admin.created("/apis", {"audience": audience, "scopes": [scope], "name": "Orders"})
    assert response.json() == {"audience": audience, "name": "Orders", "scopes": [scope]}
    where = urlsplit(location_of(stack, response))
    assert where.path == "/admin/v1/apis" and parse_qs(where.query) == {"audience": [audience]}, response.headers["Location"]
    assert ssoctl_apis(stack)[audience] == response.json()
    assert admin.page("/apis", audience=audience) == {"items": [response.json()], "next": None}
    listed, _ = walk(admin, "/apis", 200)
    audiences = [api["audience"] for api in listed]
    assert audiences == sorted(audiences) and {stack.api_a, stack.api_b, stack.issuer + "/admin", audience} <= set(audiences)
    assert [api for api in listed if api["audience"] == stack.issuer + "/admin"][0]["scopes"] == [ADMIN, ADMIN_READ]
    audited(stack, writer[0], "api add", audience)
    http = stack.session()
    within_seconds(lambda: http.get(stack.issuer + "/.well-known/openid-configuration").json()["scopes_supported"],
                   lambda scopes: scope in scopes)

    client_id = name("orders-app")
    admin.created("/clients", {"client_id": client_id, "redirect_uris": ["com.team.app:/cb"], "scopes": ["openid", scope]})
    removed = admin.delete("/apis", params={"audience": audience})
    assert removed.status_code == 200 and removed.json() == {"clients_changed": [client_id]}, removed.text
    assert audience not in ssoctl_apis(stack)
    assert admin.one(f"/clients/{client_id}")[0]["scopes"] == ["openid"]
    assert ssoctl_clients(stack)[client_id]["scopes"] == ["openid"]
    assert admin.page("/apis", audience=audience) == {"items": [], "next": None}
    audited(stack, writer[0], "api remove", audience)
    within_seconds(lambda: http.get(stack.issuer + "/.well-known/openid-configuration").json()["scopes_supported"],
                   lambda scopes: scope not in scopes)


# --- sessions --------------------------------------------------------------------------

SESSION_MEMBERS = {"sid", "user", "email", "state", "amr", "auth_time", "created_at", "expires_at", "ended_at"}


def test_sessions_are_listed_by_user_newest_first_and_one_is_ended_with_its_refresh_tokens(stack, admin, writer):
    user, password = new_user(admin)
    older_http, older_app, older = signed_in(stack, user["email"], password)
    time.sleep(1.1)  # a second apart: newest first is by time
    newer_http, newer_app, newer = signed_in(stack, user["email"], password)
    older_sid, newer_sid = claims(older["id_token"])["sid"], claims(newer["id_token"])["sid"]
    page = admin.page("/sessions", user=user["id"])
    assert [session["sid"] for session in page["items"]] == [newer_sid, older_sid] and page["next"] is None, page
    listed = ssoctl_sessions(stack, user["email"])
    for session in page["items"]:
        assert set(session) == SESSION_MEMBERS, session
        assert session["user"] == user["id"] and session["email"] == user["email"]
        assert session["state"] == "active" and session["amr"] == ["pwd"] and session["ended_at"] is None
        assert {key: value for key, value in session.items() if key != "user"} == listed[session["sid"]]
    one, etag = admin.one(f"/sessions/{newer_sid}")
    assert one == page["items"][0] and etag
    every, _ = walk(admin, "/sessions", 200)
    assert {newer_sid, older_sid} <= {session["sid"] for session in every}
    created = [session["created_at"] for session in every]
    assert created == sorted(created, reverse=True), "newest first"

    ended = admin.delete(f"/sessions/{newer_sid}")
    assert ended.status_code == 204, ended.text
    after, _ = admin.one(f"/sessions/{newer_sid}")
    assert after["state"] == "ended" and isinstance(after["ended_at"], int)
    assert ssoctl_sessions(stack, user["email"])[newer_sid]["state"] == "ended"
    refused = refresh(stack, newer_http, newer_app, newer["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", refused.text
    assert refresh(stack, older_http, older_app, older["refresh_token"]).status_code == 200, "the other session keeps its tokens"
    line = audited(stack, writer[0], "sessions revoke", newer_sid)
    assert line.get("user") in (None, user["email"], user["id"])


# --- signing keys ----------------------------------------------------------------------

KEY_MEMBERS = {"kid", "alg", "state", "created_at", "activates_at", "retired_at"}


def test_keys_are_listed_newest_first_rotated_and_a_non_active_one_retired(stack, admin, writer):
    listed = admin.page("/keys", limit=200)
    assert listed["next"] is None
    assert {key["kid"]: key for key in listed["items"]} == ssoctl_keys(stack), "as ssoctl keys list --json shows them"
    created = [key["created_at"] for key in listed["items"]]
    assert created == sorted(created, reverse=True), "newest first"
    for key in listed["items"]:
        assert set(key) == KEY_MEMBERS, key
    active = [key for key in listed["items"] if key["state"] == "active" and key["alg"] == "RS256"]
    assert len(active) == 1, listed
    one, etag = admin.one(f"/keys/{active[0]['kid']}")
    assert one == active[0] and etag

    rotated = admin.created("/keys/rotate", {})
    key = rotated.json()
    assert set(key) == KEY_MEMBERS and key["state"] == "next" and key["alg"] == "RS256" and key["retired_at"] is None, key
    assert key["activates_at"] - key["created_at"] > 60, "not now: after GATEHOUSE_KEY_ACTIVATION_DELAY"
    assert location_of(stack, rotated) == stack.issuer + f"/admin/v1/keys/{key['kid']}"
    assert ssoctl_keys(stack)[key["kid"]] == key
    assert admin.page("/keys", limit=1)["items"] == [key], "newest first"
    within_seconds(lambda: jwks_kids(stack), lambda kids: key["kid"] in kids)
    audited(stack, writer[0], "keys rotate", key["kid"])

    retired = admin.post(f"/keys/{key['kid']}/retire")
    assert retired.status_code == 200, retired.text
    assert retired.json()["kid"] == key["kid"] and retired.json()["state"] == "retired" and isinstance(retired.json()["retired_at"], int)
    assert ssoctl_keys(stack)[key["kid"]]["state"] == "retired"
    within_seconds(lambda: jwks_kids(stack), lambda kids: key["kid"] not in kids)
    audited(stack, writer[0], "keys retire", key["kid"])
    refused_unchanged(stack, lambda: admin.post(f"/keys/{active[0]['kid']}/retire"), 409, "conflict",
                      names=(active[0]["kid"],))


def test_a_rotation_now_with_an_algorithm_signs_within_seconds(stack, admin, writer):
    rotated = admin.created("/keys/rotate", {"now": True, "alg": "EdDSA"})
    key = rotated.json()
    assert key["alg"] == "EdDSA" and key["state"] == "next", key
    assert key["activates_at"] - key["created_at"] <= 5, key
    within_seconds(lambda: jwks_kids(stack), lambda kids: key["kid"] in kids)
    active = within_seconds(lambda: admin.one(f"/keys/{key['kid']}")[0], lambda shown: shown["state"] == "active", seconds=12)
    assert ssoctl_keys(stack)[key["kid"]]["state"] == "active" and active["kid"] == key["kid"]
    audited(stack, writer[0], "keys rotate now", key["kid"])


# --- audit and logs --------------------------------------------------------------------

def test_every_change_is_audited_with_the_client_as_actor_and_no_secret_reaches_any_log(stack, admin, writer):
    password, new_password = given(fresh_password()), given(fresh_password())
    user = admin.created("/users", {"email": fresh_email(PREFIX), "name": "Logged", "password": password}).json()
    assert admin.patch(f"/users/{user['id']}", {"password": new_password}).status_code == 200
    client_id, client_secret = name("logged"), given("logged-secret-" + secrets.token_hex(12))
    admin.created("/clients", {"client_id": client_id, "grant_types": ["client_credentials"], "scopes": ["api:serverA"],
                               "client_secret": client_secret})
    made = given(admin.post(f"/clients/{client_id}/secret").json()["client_secret"])
    issued = given(client_credentials(stack, stack.session(), client_id, made).json()["access_token"])
    audited(stack, writer[0], "user add", (user["email"], user["id"]))
    audited(stack, writer[0], "user passwd", (user["email"], user["id"]))
    audited(stack, writer[0], "client add", client_id)
    audited(stack, writer[0], "client secret", client_id)
    lines = admin_changes(stack, writer[0])
    assert lines and all(line["event"] == "admin_change" and line["actor"] == writer[0] for line in lines)
    assert {line["reason"] for line in lines} >= {"user add", "user passwd", "client add", "client secret"}
    # A read and a refusal write nothing.
    count = len(audit_lines(stack))
    admin.get("/users", params={"limit": 1})
    admin.post("/users", {"email": user["email"], "name": "Again", "password": fresh_password()})
    time.sleep(0.5)
    assert [line for line in audit_lines(stack)[count:] if line.get("actor") == writer[0]] == []

    time.sleep(1.5)  # nginx flushes its buffered access log every second
    logs = log_texts(stack)
    assert "audit.log" in logs and any(name.startswith("admin") for name in logs), sorted(logs)
    probes = {value: probe(value) for value in GIVEN + [admin.token, issued]}
    leaks = [(value[:12], file) for value, text in probes.items() for file, content in logs.items() if text in content]
    assert leaks == [], leaks


# --- turned off ------------------------------------------------------------------------

def test_with_the_admin_api_off_every_path_under_admin_is_404():
    off = Stack(extra_env={"GATEHOUSE_ADMIN_API": "off", "GATEHOUSE_SWEEP_INTERVAL": "86400"}).start()
    try:
        http = off.session()
        for method, path in (("GET", "/admin/v1/users"), ("POST", "/admin/v1/users"), ("GET", "/admin/v1/keys"),
                             ("GET", "/admin/"), ("GET", "/admin"), ("DELETE", "/admin/v1/apis?audience=x")):
            for headers in ({}, {"Authorization": "Bearer garbage"}):
                response = http.request(method, off.issuer + path, headers=headers, json={} if method == "POST" else None)
                assert response.status_code == 404, (method, path, response.status_code, response.headers)
                assert "WWW-Authenticate" not in response.headers
        # The rest of the issuer is there.
        assert http.get(off.issuer + "/.well-known/openid-configuration").status_code == 200
    finally:
        off.remove()


# --- the doc's examples, verbatim --------------------------------------------------------

DOC = os.path.join(ROOT, "docs", "ADMIN-API.md")


def doc_block(heading):
    text = open(DOC, encoding="utf-8").read()
    section = text[text.index(heading):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def run_block(stack, script, directory, environment):
    """Runs a block of the doc with bash against the stack: only the port,
    the CA and ssoctl (the built binary) differ from the text."""
    for offset in range(4):
        script = script.replace(f"localhost:{8443 + offset}", f"localhost:{stack.base + offset}")
    script = script.replace("Scripts/ssoctl ", os.path.join(os.environ["BIN_DIR"], "ssoctl") + " ")
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=directory, env=dict(stack.env, **environment),
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def provisioning(stack, tmp_path_factory):
    """The doc's `provisioning` client, made by its operator block run verbatim: its secret."""
    secret = given("provisioning-" + secrets.token_urlsafe(24))
    block = doc_block("## Turning it on, and who may call it")
    assert "client add provisioning --grant client_credentials" in block and "--secret-stdin" in block
    result = run_block(stack, block, tmp_path_factory.mktemp("operator"), {"ADMIN_SECRET": secret})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "added confidential client provisioning", result.stdout
    listed = ssoctl_clients(stack)["provisioning"]
    assert listed["grant_types"] == ["client_credentials"] and listed["scopes"] == [ADMIN]
    return secret


def test_the_docs_curl_example_runs_verbatim(stack, provisioning, tmp_path):
    block = doc_block("## Example: a client and a user, with curl")
    assert "ISSUER=https://localhost:8443" in block
    result = run_block(stack, block, tmp_path, {"CA": stack.ca, "ADMIN_SECRET": provisioning})
    assert result.returncode == 0, result.stderr
    decoder, text, answers = json.JSONDecoder(), result.stdout.strip(), []
    while text:
        answer, end = decoder.raw_decode(text)
        answers.append(answer)
        text = text[end:].strip()
    assert len(answers) == 2, result.stdout
    created_client, created_user = answers
    assert created_client["client_id"] == "orders-backend" and created_client["type"] == "confidential", created_client
    assert created_client["scopes"] == ["api:serverA"]
    given(created_client["client_secret"])
    assert ssoctl_clients(stack)["orders-backend"]["grant_types"] == ["client_credentials"]
    token = client_credentials(stack, stack.session(), "orders-backend", created_client["client_secret"])
    assert token.status_code == 200 and claims(token.json()["access_token"])["aud"] == [stack.api_a], token.text
    assert created_user["email"] == "ada@example.com" and created_user["roles"] == ["user"] and created_user["disabled"] is False
    listed = ssoctl_users(stack)["ada@example.com"]
    assert listed["name"] == "Ada Lovelace" and listed["sub"] == created_user["id"]
    signed_in(stack, "ada@example.com", "correct horse battery staple")
    audited(stack, "provisioning", "client add", "orders-backend")
    audited(stack, "provisioning", "user add", ("ada@example.com", created_user["id"]))


def test_the_docs_python_example_runs_verbatim(stack, provisioning, tmp_path):
    script = os.path.join(ROOT, "docs", "examples", "admin_api.py")
    assert "python3 docs/examples/admin_api.py \"$ISSUER\" provisioning \"$ADMIN_SECRET\" \"$CA\"" in open(DOC).read()
    result = subprocess.run(["python3", script, stack.issuer, "provisioning", provisioning, stack.ca], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2, lines
    made_client = re.fullmatch(r"created client (\S+) \(confidential, scopes api:serverA\); its secret, shown once: ([A-Za-z0-9_-]{43})",
                               lines[0])
    made_user = re.fullmatch(r"created user (\S+@example\.com) \(id (\S+), roles user,reports\); the invitation mail is queued", lines[1])
    assert made_client and made_user, lines
    client_id, secret = made_client.groups()
    given(secret)
    assert client_credentials(stack, stack.session(), client_id, secret).status_code == 200
    assert ssoctl_clients(stack)[client_id]["name"] == "Nightly reports"
    listed = ssoctl_users(stack)[made_user.group(1)]
    assert listed["sub"] == made_user.group(2) and listed["invitation_pending"] is True and listed["roles"] == ["user", "reports"]
    assert [row["kind"] for row in stack.rows("mail_outbox") if row["recipient"] == made_user.group(1)] == ["invitation"]
    audited(stack, "provisioning", "client add", client_id)
    wait_for(lambda: [row for row in stack.rows("mail_outbox") if row["recipient"] == made_user.group(1) and row["sent_at"]], 20,
             "the invitation sent")
