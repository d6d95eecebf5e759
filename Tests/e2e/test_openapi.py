"""openapi.yaml against the running stack, with schemathesis.

Every operation of the description is fuzzed through nginx with real TLS
(positive and negative inputs, schemathesis' coverage phase included) and every
response must be documented: no 5xx, a documented status, a documented media
type, a body that validates against its schema and the documented headers
(Cache-Control, Location, WWW-Authenticate, ...). Protected operations also get
the same generated request with real credentials (a demo user's bearer token, a
confidential client's Basic credentials, a registered client id), so the checks
reach past the authentication layer; schemathesis' `ignored_auth` check then
verifies that removing or garbling those credentials is refused. A last test
walks the real flows (sign-in, code exchange, refresh, Native SSO exchange,
introspection, revocation, logout) and checks every success response too, which
random inputs can never reach; another walks DPoP (RFC 9449): the nonce round
trip, bound tokens, userinfo under the DPoP scheme and its refusals; another
the passkeys (a software authenticator adds one at /account and signs in with
it at the login page), the account page's refusals and the ops listener;
the last signs in through an upstream provider (a second real Gatehouse)
and unlinks it.

The admin API (ISSUER/admin/v1/, docs/ADMIN-API.md) is fuzzed with real
tokens too: a confidential machine client, registered as an operator
registers one (`ssoctl client add … --grant client_credentials --scope
gatehouse:admin --secret-stdin`), gets them at /token (client_credentials,
scope gatehouse:admin). Each generated request goes once without a token,
once with one as generated (made-up ids: the refusals behind the door), and,
for an operation on one resource, once more pointed at a throwaway of this
module's own, so the handlers answer too. Nothing else is ever the target of
a change: what a credentialed POST makes is removed again at once, and a new
signing key never signs (see AdminAccess).

The login page's passkey and provider endpoints and the account page's
changes need a cookie that generated input cannot hold (the pending
sign-in's `gh_login` with its `req`, a live `sso_session` with its form
token): they are fuzzed both as they come (so every refusal must be
documented) and, as the protected operations are, again with real ones and
the same-origin headers the pages' own posts carry (a fresh pending
sign-in; a signed-in test user of this module, never the demo user), so
the checks reach the handlers behind the refusals.
"""
import atexit
import collections
import json
import os
import re
import secrets
import shutil
import tempfile
import time
from urllib.parse import urlsplit

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    ignored_auth,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from dpop_proofs import ProofKey, token_request
from oidc_flow import App, query
from stack import DEMO_PASSWORD, ROOT
from soft_authenticator import SoftAuthenticator, b64url
from test_account_security import client, fresh_address, new_user, totp
from test_federated_sign_in import Trip, upstream, upstream_user  # noqa: F401 (upstream: a fixture)

SPEC_PATH = os.path.join(ROOT, "openapi.yaml")
DEMO_CLIENT = "mobile-app-001"

# What the description must keep describing: if an endpoint silently drops out
# of openapi.yaml, the fuzzing would simply stop covering it.
EXPECTED_OPERATIONS = {
    # issuer
    "GET /.well-known/openid-configuration", "HEAD /.well-known/openid-configuration",
    "GET /.well-known/jwks.json", "HEAD /.well-known/jwks.json",
    "GET /authorize", "POST /authorize",
    "POST /login",
    "GET /login.html", "GET /login-otp.html", "GET /mobile/postlogin.html", "GET /mobile/postlogout.html",
    "POST /token", "POST /revoke", "POST /introspect", "POST /par",
    # dynamic client registration (RFC 7591, RFC 7592)
    "POST /register", "GET /register/client", "PUT /register/client", "DELETE /register/client",
    "GET /userinfo", "POST /userinfo",
    "GET /logout", "POST /logout",
    # the login page's passkey sign-in
    "POST /login/passkey/options", "POST /login/passkey",
    # signing in through an upstream provider
    "POST /login/federation", "GET /federation/callback", "POST /federation/callback",
    # getting in: sign-up, verification, password reset, invitations
    "GET /login/forgot", "POST /login/forgot", "GET /login/reset", "POST /login/reset", "GET /login/signup", "POST /login/signup",
    "GET /login/verify", "POST /login/verify", "POST /login/verify/resend", "GET /login/invitation", "POST /login/invitation",
    "GET /login/email-change", "POST /login/email-change", "GET /login/email-revert", "POST /login/email-revert",
    # the account page
    "GET /account", "HEAD /account", "GET /account/callback", "POST /account/passkeys/options", "POST /account/passkeys",
    "POST /account/passkeys/remove", "POST /account/passkeys/rename", "POST /account/sessions/end", "POST /account/sessions/end-all",
    "POST /account/password", "POST /account/totp/start", "POST /account/totp/confirm", "POST /account/totp/remove",
    "POST /account/totp/recovery-codes", "POST /account/confirm", "POST /account/delete", "POST /account/email",
    "POST /account/passkeys/confirm-options", "POST /account/passkeys/confirm", "POST /account/links/remove",
    # resource servers
    "GET /api/data", "GET /api/records",
    # app-links host
    "GET /.well-known/apple-app-site-association", "GET /.well-known/assetlinks.json",
    "GET /callback", "GET /logout-callback",
    # ops listener
    "GET /metrics", "HEAD /metrics", "GET /health/live", "HEAD /health/live", "GET /health/ready", "HEAD /health/ready",
    # the admin API
    "GET /admin/v1/users", "POST /admin/v1/users", "GET /admin/v1/users/{id}", "PATCH /admin/v1/users/{id}",
    "DELETE /admin/v1/users/{id}", "POST /admin/v1/users/{id}/unlock",
    "GET /admin/v1/clients", "POST /admin/v1/clients", "GET /admin/v1/clients/{client_id}", "PATCH /admin/v1/clients/{client_id}",
    "DELETE /admin/v1/clients/{client_id}", "POST /admin/v1/clients/{client_id}/secret",
    "GET /admin/v1/apis", "POST /admin/v1/apis", "DELETE /admin/v1/apis",
    "GET /admin/v1/sessions", "GET /admin/v1/sessions/{sid}", "DELETE /admin/v1/sessions/{sid}",
    "GET /admin/v1/keys", "POST /admin/v1/keys/rotate", "GET /admin/v1/keys/{kid}", "POST /admin/v1/keys/{kid}/retire",
}
ADMIN_OPERATIONS = {label for label in EXPECTED_OPERATIONS if label.split(" ", 1)[1].startswith("/admin/")}
# Which origin serves which path (the path item's `servers`; the issuer by default).
ORIGIN_OF_PATH = {"/api/data": "api_a", "/api/records": "api_b", "/.well-known/apple-app-site-association": "app_links",
                  "/.well-known/assetlinks.json": "app_links", "/callback": "app_links", "/logout-callback": "app_links",
                  "/metrics": "ops", "/health/live": "ops", "/health/ready": "ops"}

# The account page's paths that take a change: a signed-in browser's cookie
# and the session's form token (`csrf`).
ACCOUNT_CHANGES = {"/account/passkeys/options", "/account/passkeys", "/account/passkeys/remove", "/account/passkeys/rename", "/account/sessions/end",
                   "/account/sessions/end-all", "/account/password", "/account/totp/start", "/account/totp/confirm",
                   "/account/totp/remove", "/account/links/remove"}
# Of those, the password and TOTP forms and the passkey options: the current password they ask for
# goes through the login throttle (per account and per address), so their
# generated (wrong) guesses are made as another test user of this module,
# from a loopback address of its own, and lock neither the account the other
# account paths use nor the address the other tests here sign in from.
ACCOUNT_SECRETS = {"/account/password", "/account/totp/start", "/account/totp/confirm", "/account/totp/remove",
                   "/account/passkeys/options"}
# The login page's passkey endpoints and its "Continue with …" forms: a
# pending sign-in's cookie and its `req`.
PENDING_SIGN_IN = {"/login/passkey/options", "/login/passkey", "/login/federation"}

# Served by nginx's static module, which answers an unsupported method with a
# 405 that has no `Allow` header (RFC 9110 §15.5.6 wants one). That is nginx's
# behaviour, not Gatehouse's code, so schemathesis' `unsupported_method` check is
# not applied to these paths; every other check is.
NGINX_STATIC_PATHS = {"/login.html", "/login-otp.html", "/mobile/postlogin.html", "/mobile/postlogout.html",
                      "/.well-known/apple-app-site-association", "/.well-known/assetlinks.json", "/callback",
                      "/logout-callback"}

# What every response must satisfy.
CONFORMANCE = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
               response_headers_conformance]
# Plus, for generated cases: protected operations refuse missing or garbled
# credentials, an undocumented method gets 405 with `Allow`, and `Allow` lists
# exactly the documented methods.
FUZZ_CHECKS = CONFORMANCE + [ignored_auth, unsupported_method, allow_header_conformance]

CONFIG = schemathesis.Config.from_dict({
    "generation": {
        # Schema-valid and schema-violating inputs alike: either way the answer
        # must be documented, and never a 5xx.
        "mode": "all",
        "max-examples": 40,
    },
    "operations": [
        # Each call with the confidential client's credentials costs a scrypt
        # verification of its secret (by design), about 0.15 s here.
        {"include-path": "/introspect", "generation": {"max-examples": 15}},
        # Each admin example is sent three times (no token, the admin token,
        # and at a throwaway resource made for it); 15 keep the file's share
        # of CI time in bounds while every operation still meets both valid
        # and invalid input (test_admin_fuzzing_got_past_the_door checks).
        {"include-path-regex": "^/admin/v1/", "generation": {"max-examples": 15}},
    ],
    "phases": {
        # nginx refuses TRACE itself, before any location, with a 405 lacking
        # `Allow` (see NGINX_STATIC_PATHS); every other unexpected method reaches
        # the responders, which must answer 405 with `Allow`.
        "coverage": {"unexpected-methods": ["get", "put", "post", "delete", "options", "patch", "query"]},
        "stateful": {"enabled": False},
    },
})
schema = schemathesis.openapi.from_path(SPEC_PATH, config=CONFIG)
# Hypothesis keeps caches in ./.hypothesis; not in the checkout. (The example
# database is off anyway: every run starts fresh.)
HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="gatehouse-openapi-hypothesis-")
set_hypothesis_home_dir(HYPOTHESIS_HOME)
atexit.register(shutil.rmtree, HYPOTHESIS_HOME, ignore_errors=True)


@schemathesis.deserializer("text/html")
def html_document(ctx, response):
    """The pages are validated too (as text: the error pages and static pages
    are whole documents, nginx's own 413/429 pages are plain strings)."""
    return response.content.decode("utf-8")


def origin(stack, path):
    return getattr(stack, ORIGIN_OF_PATH.get(path, "issuer"))


def http_session(stack):
    # Trusts the stack's CA only; stack.session() ignores REQUESTS_CA_BUNDLE.
    return stack.session()


@pytest.fixture(scope="module")
def credentials(stack):
    """Real credentials for the protected operations: a bearer access token of
    the demo user (every scope, so userinfo, api-a and api-b all accept it) and
    a confidential client, made as an operator would make it; for the account
    page a signed-in browser of a test user, for the login page's passkey
    and provider endpoints a fresh pending sign-in per request, and for the
    admin API a machine client granted gatehouse:admin (AdminAccess)."""
    app = App(stack, http_session(stack))
    tokens = app.exchange(app.sign_in())
    assert tokens.status_code == 200, tokens.text
    client_id, secret = "openapi-rs-" + secrets.token_hex(4), "openapi-secret-" + secrets.token_hex(12)
    made = stack.ssoctl("client", "add", client_id, "--redirect-uri", "https://rs.example/cb", "--secret-stdin",
                        input=secret + "\n")
    assert made.returncode == 0, made.stderr
    # Dynamic registration: an initial access token for every generated
    # registration, and a registered client for its configuration endpoint.
    initial = stack.ssoctl("client", "registration-token", "--uses", "1000", "--ttl", "7200")
    assert initial.returncode == 0, initial.stderr
    registered = http_session(stack).post(stack.issuer + "/register", headers={"Authorization": "Bearer " + initial.stdout.strip()},
                                          json={"redirect_uris": ["https://rs.example/cb"]})
    assert registered.status_code == 201, registered.text
    admin = AdminAccess(stack)
    yield {"bearer": tokens.json()["access_token"], "basic": (client_id, secret), "account": AccountBrowser(stack),
           "initial_token": initial.stdout.strip(),
           "registered": (registered.json()["client_id"], registered.json()["registration_access_token"]),
           "account_secrets": AccountBrowser(stack, address=fresh_address()),
           "pending_sign_in": lambda: pending_sign_in(stack),
           # What the pages' own posts carry (Fetch Metadata, Origin).
           "same_origin": {"Sec-Fetch-Site": "same-origin", "Origin": stack.issuer},
           "admin": admin}
    admin.close()


ADMIN = "/admin/v1"


class AdminAccess:
    """The admin API as the fuzzing reaches it, with real tokens.

    A confidential machine client, registered as docs/ADMIN-API.md has the
    operator register one, and its access tokens from /token
    (client_credentials, scope gatehouse:admin), a fresh one whenever the
    last is five minutes old (they live 15), so a long run never slides into
    401s that would pass as documented refusals.

    What the generated requests change is only ever this module's own:
    - Made-up ids (a generated `{id}`, `{client_id}`, `{sid}`, `{kid}`,
      `?audience=`) name nothing that exists; the description gives no
      example of one, so neither the examples nor the coverage phase can
      name the demo clients, the demo user, a real signing key, a real API
      or this module's admin client.
    - For the handlers' own answers the same request is sent again pointed
      at a throwaway (`target`): a user, a client, a session of a user of its
      own, an API and a signing key made here for it, made again whenever a
      request has deleted, ended or retired the last one. GET of one key
      reads the newest real key (reading changes nothing).
    - What a credentialed POST makes (a user, a client, an API) is deleted
      again at once, so the demo's app-link files, discovery's scopes and
      the mail outbox do not fill with generated things other tests see.
    - POST /keys/rotate never goes with `now: true`: that key would sign
      4 s later, in place of the key every other test's tokens are checked
      against. Every key a rotation makes (`state: next`, signing only after
      GATEHOUSE_KEY_ACTIVATION_DELAY, or 4 s for an algorithm's first) is
      retired again at once, and any left is retired when the module ends.
    """

    TOKEN_REUSE_SECONDS = 300

    def __init__(self, stack):
        self.stack = stack
        self.client_id = "openapi-admin-" + secrets.token_hex(4)
        self.secret = "openapi-admin-secret-" + secrets.token_urlsafe(18)
        made = stack.ssoctl("client", "add", self.client_id, "--grant", "client_credentials", "--scope", "gatehouse:admin",
                            "--secret-stdin", input=self.secret + "\n")
        assert made.returncode == 0, made.stderr
        self._token, self._fetched = None, 0.0
        self.targets = {}  # kind -> the id of a throwaway that exists now
        self.rotated = set()  # kids this module's requests made; none may be left to sign
        self.session_user = None  # (email, password) of the user whose sessions are the throwaway sessions
        # The statuses of the credentialed calls, by operation, and what existed
        # before the first of them (test_admin_fuzzing_got_past_the_door).
        self.outcomes = collections.defaultdict(collections.Counter)
        self.before = None

    # ---- tokens and plain calls

    def token(self):
        if self._token is None or time.monotonic() - self._fetched > self.TOKEN_REUSE_SECONDS:
            response = http_session(self.stack).post(self.stack.issuer + "/token", auth=(self.client_id, self.secret),
                                                     data={"grant_type": "client_credentials", "scope": "gatehouse:admin"})
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["token_type"] == "Bearer" and body["scope"] == "gatehouse:admin", body
            self._token, self._fetched = body["access_token"], time.monotonic()
        return self._token

    def headers(self):
        return {"Authorization": "Bearer " + self.token()}

    def call(self, method, path, **kwargs):
        """A request of this module's own (not generated), with the token."""
        headers = {**self.headers(), **kwargs.pop("headers", {})}
        return http_session(self.stack).request(method, self.stack.issuer + ADMIN + path, headers=headers,
                                                allow_redirects=False, **kwargs)

    def ssoctl(self, *args, input=None):
        result = self.stack.ssoctl(*args, input=input)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result.stdout

    def keys(self):
        return json.loads(self.ssoctl("keys", "list", "--json"))

    def inventory(self):
        """The clients, users, APIs and live signing keys there are, as ssoctl shows them."""
        return {"clients": {client["client_id"]: client for client in json.loads(self.ssoctl("client", "list", "--json"))},
                "users": {user["email"]: user for user in json.loads(self.ssoctl("user", "list", "--json"))},
                "apis": {api["audience"]: api for api in json.loads(self.ssoctl("api", "list", "--json"))},
                "keys": {key["kid"] for key in self.keys() if key["state"] != "retired"}}

    # ---- the throwaways

    def target(self, kind):
        if kind not in self.targets:
            self.targets[kind] = getattr(self, "_new_" + kind)()
        return self.targets[kind]

    def _new_user(self, email=None, password=None):
        email = email or f"openapi-target-{secrets.token_hex(5)}@example.com"
        password = password or "pw-" + secrets.token_urlsafe(15)
        self.ssoctl("user", "add", email, "--name", "OpenAPI Target", "--password-stdin", input=password + "\n")
        ((subject,),) = self.stack.query("SELECT subject FROM users WHERE email = ?", email)
        return subject

    def _new_client(self):
        client_id = "openapi-target-" + secrets.token_hex(4)
        self.ssoctl("client", "add", client_id, "--redirect-uri", "https://rs.example/cb", "--secret-stdin",
                    input="openapi-target-secret-" + secrets.token_urlsafe(12) + "\n")
        return client_id

    def _new_session(self):
        """A fresh sign-in of a user of its own (never the one the user operations change)."""
        if self.session_user is None:
            self.session_user = (f"openapi-sessions-{secrets.token_hex(5)}@example.com", "pw-" + secrets.token_urlsafe(15))
            self._new_user(*self.session_user)
        email, password = self.session_user
        app = App(self.stack, http_session(self.stack))
        signed_in = app.login(app.authorize().headers["Location"], email=email, password=password)
        assert signed_in.status_code == 303 and "code=" in signed_in.headers["Location"], signed_in.headers
        sessions = json.loads(self.ssoctl("sessions", "list", email, "--json"))
        return next(session["sid"] for session in sessions if session["state"] == "active")  # newest first

    def _new_api(self):
        name = "openapi-target-" + secrets.token_hex(4)
        audience = f"https://{name}.example/api"
        self.ssoctl("api", "add", audience, "--scope", name + ":read")
        return audience

    def _new_key(self):
        before = {key["kid"] for key in self.keys()}
        self.ssoctl("keys", "rotate")
        (kid,) = {key["kid"] for key in self.keys()} - before
        self.rotated.add(kid)
        return kid

    def newest_key(self):
        return self.keys()[0]["kid"]

    def point_at_target(self, case):
        """Points an operation on one resource at its throwaway; the kind, or None for the others."""
        path, method = case.operation.path, case.operation.method.upper()
        if path in ("/admin/v1/users/{id}", "/admin/v1/users/{id}/unlock"):
            case.path_parameters = {**case.path_parameters, "id": self.target("user")}
            return "user"
        if path in ("/admin/v1/clients/{client_id}", "/admin/v1/clients/{client_id}/secret"):
            case.path_parameters = {**case.path_parameters, "client_id": self.target("client")}
            return "client"
        if path == "/admin/v1/sessions/{sid}":
            case.path_parameters = {**case.path_parameters, "sid": self.target("session")}
            return "session"
        if path == "/admin/v1/keys/{kid}":
            case.path_parameters = {**case.path_parameters, "kid": self.newest_key()}
            return None  # only read
        if path == "/admin/v1/keys/{kid}/retire":
            case.path_parameters = {**case.path_parameters, "kid": self.target("key")}
            return "key"
        if path == "/admin/v1/apis" and method == "DELETE":
            case.query = {**(case.query if isinstance(case.query, dict) else {}), "audience": self.target("api")}
            return "api"
        return None

    # ---- the generated requests

    def fuzz(self, case, send):
        """The generated request (already sent without a token) again with
        one: as generated, then pointed at a throwaway. `send(case, headers)`
        sends it and checks the answer."""
        label = f"{case.operation.method.upper()} {case.operation.path}"
        if case.method.upper() != case.operation.method.upper():
            return  # an unexpected-method probe of the coverage phase: 405 before any token is read
        if self.before is None:
            self.before = self.inventory()
        if label == "POST /admin/v1/keys/rotate" and isinstance(case.body, dict) and case.body.get("now") is True:
            case.body = {**case.body, "now": False}  # never a key that signs at once (see the class)
        self.after(label, case, send(case, self.headers()), kind=None)
        if label.endswith(("/{id}", "/{id}/unlock", "/{client_id}", "/{client_id}/secret", "/{sid}", "/{kid}", "/{kid}/retire")) \
                or label == "DELETE /admin/v1/apis":
            kind = self.point_at_target(case)
            self.after(label, case, send(case, self.headers()), kind=kind)

    def after(self, label, case, response, kind):
        """Counts the answer; removes what it made; forgets a throwaway it used up."""
        self.outcomes[label][response.status_code] += 1
        created = response.json() if response.status_code == 201 else None
        if label == "POST /admin/v1/users" and created:
            assert self.call("DELETE", "/users/" + created["id"]).status_code == 204
        elif label == "POST /admin/v1/clients" and created:
            assert self.call("DELETE", "/clients/" + created["client_id"]).status_code == 204
        elif label == "POST /admin/v1/apis" and created:
            assert self.call("DELETE", "/apis", params={"audience": created["audience"]}).status_code == 200
        elif label == "POST /admin/v1/keys/rotate" and created:
            self.rotated.add(created["kid"])
            retired = self.call("POST", f"/keys/{created['kid']}/retire")
            assert retired.status_code == 200 and retired.json()["state"] == "retired", retired.text
        # Deleted, ended or retired: the next request gets a new one.
        used_up = case.method.upper() == "DELETE" or label == "POST /admin/v1/keys/{kid}/retire"
        if kind is not None and used_up and response.status_code in (200, 204):
            self.targets.pop(kind, None)

    def close(self):
        """No key this module made may ever sign; its throwaways go."""
        states = {key["kid"]: key["state"] for key in self.keys()}
        if self.before is not None:
            # Also one whose answer failed its checks before `after` saw it.
            self.rotated |= {kid for kid, state in states.items() if state == "next" and kid not in self.before["keys"]}
        for kid in self.rotated:
            if states.get(kid) not in (None, "retired"):
                self.ssoctl("keys", "retire", kid)
        for kind, identifier in self.targets.items():
            if kind == "user":
                self.call("DELETE", "/users/" + identifier)
            elif kind == "client":
                self.call("DELETE", "/clients/" + identifier)
            elif kind == "api":
                self.call("DELETE", "/apis", params={"audience": identifier})


def pending_sign_in(stack):
    """A browser at the login page: its `gh_login` cookie and the page's `req`."""
    http = http_session(stack)
    login_page = App(stack, http).authorize()
    assert login_page.status_code == 303 and login_page.headers["Location"].startswith("/login.html?client_id="), login_page.text
    return http.cookies["gh_login"], query(login_page.headers["Location"])["req"]


class AccountBrowser:
    """A browser signed in as a test user of its own (the generated requests may
    end its sign-ins): its `sso_session` cookie and the account page's form
    token, signing in again whenever the session has ended; from `address`
    (a loopback address of its own) when given."""

    def __init__(self, stack, address=None):
        self.stack = stack
        self.address = address
        self.email, self.password, _ = new_user(stack)
        self.cookie = None

    def http(self):
        return http_session(self.stack) if self.address is None else client(self.stack, self.address)

    def sign_in(self):
        http = self.http()
        app = App(self.stack, http)
        signed_in = app.login(app.authorize().headers["Location"], email=self.email, password=self.password)
        assert signed_in.status_code == 303 and "code=" in signed_in.headers["Location"], signed_in.headers
        self.cookie = http.cookies["sso_session"]

    def session(self):
        """(cookie, form token) of a live session."""
        for _ in range(2):
            if self.cookie is not None:
                page = self.http().get(self.stack.issuer + "/account", cookies={"sso_session": self.cookie})
                token = re.search(r'data-csrf="([A-Za-z0-9_-]+)"', page.text)
                if token:
                    return self.cookie, token.group(1)
            self.sign_in()
        raise AssertionError("no live session for the account page")


# ---- the description itself -------------------------------------------------

def test_the_description_lists_every_endpoint_and_its_origin(stack):
    labels = {result.ok().label for result in schema.get_all_operations()}
    assert labels == EXPECTED_OPERATIONS, (sorted(EXPECTED_OPERATIONS - labels), sorted(labels - EXPECTED_OPERATIONS))
    # Each path's `servers` template, filled with this stack's ports, names the
    # origin that really serves it.
    raw = schema.raw_schema
    ports = {"host": "localhost", "issuerPort": stack.base, "apiAPort": stack.base + 1, "apiBPort": stack.base + 2,
             "appLinksPort": stack.base + 3, "opsPort": stack.base + 4}
    for path, item in raw["paths"].items():
        server = (item.get("servers") or raw["servers"])[0]
        assert server["url"].format(**ports) == origin(stack, path), path
    # The discovery document and the description agree on the issuer's endpoints.
    discovery = http_session(stack).get(stack.issuer + "/.well-known/openid-configuration").json()
    for key in ("jwks_uri", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "end_session_endpoint",
                "revocation_endpoint", "introspection_endpoint", "pushed_authorization_request_endpoint", "registration_endpoint"):
        url = urlsplit(discovery[key])
        assert f"{url.scheme}://{url.netloc}" == stack.issuer and url.path in raw["paths"], key


# ---- generated requests -----------------------------------------------------

def with_credentials(case, credentials):
    """The same request with real credentials (or a registered client id), as
    keyword arguments for `call_and_validate` (and the `session` to send it
    through, when not the generated request's); None when the operation has none."""
    path, method = case.operation.path, case.operation.method.upper()
    if case.method.upper() != method:
        return None  # an unexpected-method probe of the coverage phase
    if path in ("/userinfo", "/api/data", "/api/records"):
        return {"headers": {"Authorization": "Bearer " + credentials["bearer"]}}
    if path == "/introspect":
        return {"auth": credentials["basic"]}
    if path == "/register":
        return {"headers": {"Authorization": "Bearer " + credentials["initial_token"]}}
    if path == "/register/client":
        client_id, token = credentials["registered"]
        return {"headers": {"Authorization": "Bearer " + token}, "params": {"client_id": client_id}}
    if path == "/account":
        return {"cookies": {"sso_session": credentials["account"].session()[0]}}
    if path in ACCOUNT_SECRETS and isinstance(case.body, dict):
        browser = credentials["account_secrets"]
        cookie, token = browser.session()
        return {"cookies": {"sso_session": cookie}, "data": {**case.body, "csrf": token}, "headers": dict(credentials["same_origin"]),
                "session": browser.http()}
    if path in ACCOUNT_CHANGES and isinstance(case.body, dict):
        cookie, token = credentials["account"].session()
        return {"cookies": {"sso_session": cookie}, "data": {**case.body, "csrf": token}, "headers": dict(credentials["same_origin"])}
    if path in PENDING_SIGN_IN and isinstance(case.body, dict):
        cookie, req = credentials["pending_sign_in"]()
        return {"cookies": {"gh_login": cookie}, "data": {**case.body, "req": req}, "headers": dict(credentials["same_origin"])}
    # Public-client endpoints and the browser endpoints: name the demo client,
    # and for /authorize one of its redirect URIs, so validation goes deeper
    # than "unknown client".
    fields = {"/token": {"client_id": DEMO_CLIENT}, "/revoke": {"client_id": DEMO_CLIENT},
              "/par": {"client_id": DEMO_CLIENT, "redirect_uri": "myapp:auth/callback"},
              "/logout": {"client_id": DEMO_CLIENT},
              "/authorize": {"client_id": DEMO_CLIENT, "redirect_uri": "myapp:auth/callback"}}.get(path)
    if fields is None:
        return None
    if method == "GET":
        return {"params": fields}
    if isinstance(case.body, dict):
        return {"data": {**case.body, **fields}}
    return None


@schema.parametrize()
@settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_every_response_is_documented(case, stack, credentials):
    base_url = origin(stack, case.operation.path)
    checks = [check for check in FUZZ_CHECKS
              if not (check is unsupported_method and case.operation.path in NGINX_STATIC_PATHS)]
    http = http_session(stack)
    case.call_and_validate(base_url=base_url, session=http, verify=stack.ca, checks=checks)
    if case.operation.path.startswith(ADMIN + "/"):
        credentials["admin"].fuzz(case, lambda admin_case, headers: admin_case.call_and_validate(
            base_url=base_url, session=http, verify=stack.ca, checks=checks, headers=headers))
        return
    extra = with_credentials(case, credentials)
    if extra is not None:
        case.call_and_validate(base_url=base_url, session=extra.pop("session", http), verify=stack.ca, checks=checks, **extra)


def test_admin_fuzzing_got_past_the_door(credentials):
    """The credentialed admin requests of test_every_response_is_documented
    really carried a working token: none was refused at the door (a 401 or
    403 is documented, so a broken token would otherwise pass unnoticed) and
    every operation's handler answered a success at least once (with the
    throwaways, and the description's examples); and they destroyed or
    changed nothing that was there before them."""
    admin = credentials["admin"]
    if set(admin.outcomes) != ADMIN_OPERATIONS:
        pytest.skip("the admin operations were not all fuzzed in this run")
    for label, statuses in sorted(admin.outcomes.items()):
        assert not statuses.keys() & {401, 403}, (label, statuses)
        assert any(200 <= status < 300 for status in statuses), (label, statuses)
    # And it changed nothing it found: every client, user and API as it was,
    # every signing key that was live still live (the admin operations are
    # the description's last paths, so nothing else ran in between).
    now = admin.inventory()
    for kind in ("clients", "users", "apis"):
        for name, before in admin.before[kind].items():
            assert now[kind].get(name) == before, (kind, name, before, now[kind].get(name))
    assert admin.before["keys"] <= now["keys"], admin.before["keys"] - now["keys"]


# ---- the real flows ---------------------------------------------------------

def conforms(stack, response, path=None):
    """Validates a response the flows below received against its operation
    (`path`: the description's path template, when the URL fills one in)."""
    request = response.request
    url = urlsplit(request.url)
    operation = schema[path or url.path][request.method]
    assert f"{url.scheme}://{url.netloc}" == origin(stack, url.path)
    # The template's `{name}` segments, as the URL fills them in.
    pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(path or url.path))
    filled = re.fullmatch(pattern, url.path)
    assert filled, (path, url.path)
    case = operation.Case(method=request.method, path_parameters=filled.groupdict() or None, query=query(request.url) or None)
    case.validate_response(response, checks=CONFORMANCE)
    return response


def test_success_responses_of_the_real_flows_are_documented(stack, credentials):
    http = http_session(stack)
    issuer = stack.issuer
    get = lambda url, **kwargs: conforms(stack, http.get(url, allow_redirects=False, **kwargs))  # noqa: E731
    post = lambda url, **kwargs: conforms(stack, http.post(url, allow_redirects=False, **kwargs))  # noqa: E731

    for url in (issuer + "/.well-known/openid-configuration", issuer + "/.well-known/jwks.json",
                stack.app_links + "/.well-known/apple-app-site-association",
                stack.app_links + "/.well-known/assetlinks.json"):
        assert get(url).status_code == 200
    jwks = get(issuer + "/.well-known/jwks.json")
    assert get(issuer + "/.well-known/jwks.json", headers={"If-None-Match": jwks.headers["ETag"]}).status_code == 304

    # Sign-in with every scope (device_sso: a device secret), through the pages.
    app = App(stack, http, scope="openid profile email offline_access device_sso api:serverA api:serverB")
    login_page = get(app.authorize_url())
    assert login_page.status_code == 303 and login_page.headers["Location"].startswith("/login.html?client_id=")
    assert get(issuer + login_page.headers["Location"]).status_code == 200
    signed_in = post(issuer + "/login", data={"req": query(login_page.headers["Location"])["req"],
                                              "email": "alice@example.com", "password": DEMO_PASSWORD})
    assert signed_in.status_code == 303
    tokens = post(issuer + "/token", data={"grant_type": "authorization_code", "code": app.code_from(signed_in),
                                           "redirect_uri": app.redirect_uri, "client_id": app.client_id,
                                           "code_verifier": app.verifier}).json()
    assert "device_secret" in tokens and "refresh_token" in tokens

    # With the SSO cookie: a code at once (303 back to the app).
    again = App(stack, http)
    assert get(again.authorize_url()).headers["Location"].startswith(again.redirect_uri + "?code=")

    # A pushed request (RFC 9126): 201, then /authorize by reference.
    pushed_app = App(stack, http)
    pushed = post(issuer + "/par", data=dict(query(pushed_app.authorize_url())))
    assert pushed.status_code == 201
    by_reference = get(issuer + "/authorize", params={"client_id": pushed_app.client_id,
                                                      "request_uri": pushed.json()["request_uri"]})
    assert by_reference.headers["Location"].startswith(pushed_app.redirect_uri + "?code=")

    bearer = {"Authorization": "Bearer " + tokens["access_token"]}
    assert get(issuer + "/userinfo", headers=bearer).status_code == 200
    assert post(issuer + "/userinfo", data={"access_token": tokens["access_token"]}).status_code == 200
    assert get(stack.api_a + "/api/data", headers=bearer).status_code == 200
    assert get(stack.api_b + "/api/records", headers=bearer).status_code == 200

    refreshed = post(issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                                              "client_id": app.client_id, "device_secret": tokens["device_secret"]})
    assert refreshed.status_code == 200 and refreshed.json()["device_secret"] == tokens["device_secret"]

    exchanged = post(issuer + "/token", data={
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "client_id": "mobile-app-002",
        "audience": issuer, "subject_token": tokens["id_token"],
        "subject_token_type": "urn:ietf:params:oauth:token-type:id_token", "actor_token": tokens["device_secret"],
        "actor_token_type": "urn:openid:params:token-type:device-secret", "scope": "openid offline_access api:serverA"})
    assert exchanged.status_code == 200 and "issued_token_type" in exchanged.json()

    service = credentials["basic"]
    for token, kind in ((tokens["access_token"], "access_token"), (refreshed.json()["refresh_token"], "refresh_token")):
        body = post(issuer + "/introspect", data={"token": token}, auth=service).json()
        assert body["active"] is True and body["token_use"] == kind
    assert post(issuer + "/introspect", data={"token": "nonsense"}, auth=service).json() == {"active": False}

    assert post(issuer + "/revoke", data={"token": exchanged.json()["refresh_token"],
                                          "client_id": "mobile-app-002"}).status_code == 200

    # Logout without a hint while signed in: the confirmation page; with the
    # hint: signed out and back to the app with state.
    assert get(issuer + "/logout").status_code == 200
    signed_out = get(issuer + "/logout", params={"id_token_hint": tokens["id_token"],
                                                 "post_logout_redirect_uri": "myapp:auth/logout", "state": "bye"})
    assert signed_out.status_code == 303 and signed_out.headers["Location"] == "myapp:auth/logout?state=bye"
    assert get(issuer + "/mobile/postlogout.html", params={"state": "bye"}).status_code == 200



def test_dpop_answers_of_the_resource_servers_are_documented(stack):
    """Requests with DPoP-bound tokens (RFC 9449 §7), which generated inputs
    cannot make: a success and each kind of refusal, at both APIs."""
    from test_dpop_resource_servers import Phone, bound_token

    http = http_session(stack)
    phone = Phone()
    token = bound_token(stack, phone)
    for url in (stack.api_a + "/api/data", stack.api_b + "/api/records"):
        proof = phone.proof(url, token)
        with_proof = {"Authorization": "DPoP " + token, "DPoP": proof}
        assert conforms(stack, http.get(url, headers=with_proof)).status_code == 200
        assert conforms(stack, http.get(url, headers=with_proof)).json()["error"] == "invalid_dpop_proof"  # replayed
        assert conforms(stack, http.get(url, headers={"Authorization": "Bearer " + token})).json()["error"] == \
            "token_requires_dpop"
        assert conforms(stack, http.get(url, headers={"Authorization": "DPoP " + token,
                                                      "DPoP": Phone().proof(url, token)})).json()["error"] == \
            "dpop_key_mismatch"
        narrow = bound_token(stack, phone, scope="openid")
        assert conforms(stack, http.get(url, headers={"Authorization": "DPoP " + narrow,
                                                      "DPoP": phone.proof(url, narrow)})).status_code == 403


def test_dpop_responses_of_the_real_flows_are_documented(stack):
    http = http_session(stack)
    issuer, token_url, userinfo = stack.issuer, stack.issuer + "/token", stack.issuer + "/userinfo"
    get = lambda url, **kwargs: conforms(stack, http.get(url, allow_redirects=False, **kwargs))  # noqa: E731
    post = lambda url, **kwargs: conforms(stack, http.post(url, allow_redirects=False, **kwargs))  # noqa: E731
    key = ProofKey()
    app = App(stack, http, scope="openid email offline_access")
    form = {"grant_type": "authorization_code", "code": app.sign_in(dpop_jkt=key.thumbprint), "redirect_uri": app.redirect_uri,
            "client_id": app.client_id, "code_verifier": app.verifier}

    # RFC 9449 §8: the nonce round trip, then bound tokens and the next nonce.
    first = post(token_url, data=form, headers={"DPoP": key.proof("POST", token_url)})
    assert first.status_code == 400 and first.json()["error"] == "use_dpop_nonce" and first.headers["DPoP-Nonce"]
    bound = post(token_url, data=form, headers={"DPoP": key.proof("POST", token_url, nonce=first.headers["DPoP-Nonce"])})
    assert bound.status_code == 200 and bound.json()["token_type"] == "DPoP" and bound.headers["DPoP-Nonce"]
    nonce, token = bound.headers["DPoP-Nonce"], bound.json()["access_token"]
    assert post(token_url, data=form, headers={"DPoP": "not-a-proof"}).json()["error"] == "invalid_dpop_proof"
    unproved = post(token_url, data={"grant_type": "refresh_token", "refresh_token": bound.json()["refresh_token"],
                                     "client_id": app.client_id})
    assert unproved.status_code == 400 and unproved.json()["error"] == "invalid_dpop_proof"

    # Userinfo under the DPoP scheme, GET and POST, and its DPoP challenges.
    dpop = lambda method: {"Authorization": "DPoP " + token, "DPoP": key.proof(method, userinfo, access_token=token)}  # noqa: E731
    assert get(userinfo, headers=dpop("GET")).status_code == 200
    assert post(userinfo, headers=dpop("POST")).status_code == 200
    for headers, status, error in (({"Authorization": "Bearer " + token}, 401, "invalid_token"),
                                   ({"Authorization": "DPoP " + token}, 401, "invalid_dpop_proof"),
                                   ({"Authorization": "DPoP " + token, "DPoP": key.proof("GET", userinfo)}, 401, "invalid_dpop_proof"),
                                   ({"Authorization": "DPoP"}, 400, "invalid_request")):
        refused = get(userinfo, headers=headers)
        assert refused.status_code == status and refused.json()["error"] == error, refused.text
        assert refused.headers["WWW-Authenticate"].startswith('DPoP algs="ES256 EdDSA RS256"')

    # A bound refresh token, refreshed with a proof by its key.
    refreshed = post(token_url, headers={"DPoP": key.proof("POST", token_url, nonce=nonce)},
                     data={"grant_type": "refresh_token", "refresh_token": bound.json()["refresh_token"], "client_id": app.client_id})
    assert refreshed.status_code == 200 and refreshed.json()["token_type"] == "DPoP"


# ---- passkeys, the account page and the ops listener --------------------------

def calls(stack, http):
    """GET and POST through `http` (its cookie jar), each answer checked against the description."""
    get = lambda url, **kwargs: conforms(stack, http.get(url, allow_redirects=False, **kwargs))  # noqa: E731
    post = lambda url, **kwargs: conforms(stack, http.post(url, allow_redirects=False, **kwargs))  # noqa: E731
    return get, post


def test_ops_answers_are_documented(stack):
    """The ops listener's real answers (plain HTTP on loopback), GET and HEAD."""
    get, _ = calls(stack, http_session(stack))
    ready = get(stack.ops + "/health/ready")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    live = get(stack.ops + "/health/live")
    assert live.status_code == 200 and live.json()["checks"]["login"] == "ok"
    metrics = get(stack.ops + "/metrics")
    assert metrics.status_code == 200 and re.search(r"^gatehouse_ready 1(\.0)?$", metrics.text, re.MULTILINE), metrics.text
    for path in ("/health/ready", "/health/live", "/metrics"):
        assert conforms(stack, http_session(stack).head(stack.ops + path)).status_code == 200


def test_passkey_and_account_answers_of_the_real_flows_are_documented(stack):
    """A passkey added at /account by a software authenticator, a sign-in
    with it at the login page, its removal, the sessions it made signed out
    one by one and everywhere, and the refusals on the way."""
    issuer, authenticator = stack.issuer, SoftAuthenticator()
    email, password, _ = new_user(stack)
    phone = http_session(stack)
    get, post = calls(stack, phone)

    # Signed out: the page sends the browser to sign in; a change is refused (cross-site first, then signed out).
    signed_out = get(issuer + "/account")
    assert signed_out.status_code == 303 and signed_out.headers["Location"].startswith("/authorize?client_id=gatehouse-account&")
    failed = get(issuer + "/account/callback", params={"state": "x", "code": "y"})
    assert failed.status_code == 400 and 'id="signed-out"' in failed.text
    assert post(issuer + "/account/passkeys/options", data={"csrf": "x"}).json()["error"] == "signed_out"
    cross_site = post(issuer + "/account/passkeys/options", data={"csrf": "x"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross_site.status_code == 403 and cross_site.headers["Content-Type"].startswith("text/html")

    # Signed in: the page and its form token; a wrong token and a non-form body are refused.
    app = App(stack, phone)
    assert post(issuer + "/login", data={"req": query(app.authorize().headers["Location"])["req"], "email": email,
                                         "password": password}).status_code == 303
    page = get(issuer + "/account", params={"done": "removed"})
    assert page.status_code == 200 and f'<span id="account-email">{email}</span>' in page.text
    csrf = re.search(r'data-csrf="([A-Za-z0-9_-]+)"', page.text).group(1)
    wrong_token = post(issuer + "/account/passkeys/options", data={"csrf": "not-" + csrf})
    assert wrong_token.status_code == 403 and wrong_token.json()["error"] == "invalid_request"
    assert post(issuer + "/account/passkeys/options", json={"csrf": csrf}).status_code == 415

    # Adding a passkey: the current password first, the options, the new credential; its challenge is spent.
    for fields, error in (({}, "password_missing"), ({"current": "not-" + password}, "password_wrong")):
        refused = post(issuer + "/account/passkeys/options", data={"csrf": csrf, **fields})
        assert refused.status_code == 400 and refused.json()["error"] == error, refused.text
    options = post(issuer + "/account/passkeys/options", data={"csrf": csrf, "current": password})
    assert options.status_code == 200 and options.json()["excludeCredentials"] == []
    created = authenticator.create(options.json(), issuer)
    added = post(issuer + "/account/passkeys", data={"csrf": csrf, "name": "OpenAPI phone", **created})
    assert added.status_code == 200 and added.json() == {"status": "added", "name": "OpenAPI phone"}, added.text
    again = post(issuer + "/account/passkeys", data={"csrf": csrf, **created})
    assert again.status_code == 400 and again.json()["error"] == "passkey_refused"
    assert post(issuer + "/account/passkeys", data={"csrf": csrf}).json()["error"] == "invalid_request"
    assert post(issuer + "/account/passkeys/options", data={"csrf": csrf, "current": password}).json()["excludeCredentials"] == \
        [{"type": "public-key", "id": b64url(authenticator.credential_id)}]

    # Signing in with it on another browser: options, the assertion, the code.
    laptop = http_session(stack)
    get_, post_ = calls(stack, laptop)
    other = App(stack, laptop)
    req = query(get_(other.authorize_url()).headers["Location"])["req"]
    request_options = post_(issuer + "/login/passkey/options", data={"req": req})
    assert request_options.status_code == 200 and request_options.json()["userVerification"] == "required"
    refused = post_(issuer + "/login/passkey", data={"req": req, **authenticator.get(request_options.json(), issuer),
                                                    "signature": b64url(b"not a signature")})
    assert refused.status_code == 400 and refused.json()["error"] == "passkey_refused"
    assertion = authenticator.get(post_(issuer + "/login/passkey/options", data={"req": req}).json(), issuer)
    signed_in = post_(issuer + "/login/passkey", data={"req": req, **assertion})
    assert signed_in.status_code == 200 and "sso_session" in laptop.cookies, signed_in.text
    assert signed_in.json()["location"].startswith(other.redirect_uri + "?code=")
    # The pending sign-in is used up (and its cookie cleared): back to the login page.
    expired = post_(issuer + "/login/passkey/options", data={"req": req})
    assert expired.status_code == 303 and expired.headers["Location"] == "/login.html?error=expired"
    cross_site = post_(issuer + "/login/passkey/options", data={"req": req}, headers={"Origin": "https://evil.example"})
    assert cross_site.status_code == 403

    # Removing it: a plain form, back to the page; a second time it is not found.
    for done in ("removed", "not_found"):
        removed = post(issuer + "/account/passkeys/remove", data={"csrf": csrf, "id": b64url(authenticator.credential_id)})
        assert removed.status_code == 303 and removed.headers["Location"] == "/account?done=" + done

    # Sessions and devices: this browser's session is listed first, the
    # laptop's next. Signing the laptop out, twice; then everywhere.
    this_browser, laptop_sid = re.findall(r'name="sid" value="([A-Za-z0-9_-]+)"', get(issuer + "/account").text)
    for done in ("session_ended", "session_not_found"):
        ended = post(issuer + "/account/sessions/end", data={"csrf": csrf, "sid": laptop_sid})
        assert ended.status_code == 303 and ended.headers["Location"] == "/account?done=" + done
    cookie = phone.cookies["sso_session"]
    everywhere = post(issuer + "/account/sessions/end-all", data={"csrf": csrf})
    assert everywhere.status_code == 303 and everywhere.headers["Location"] == "/account"
    assert "sso_session" not in phone.cookies
    # The ended session's cookie, sent anyway, no longer signs anything.
    assert post(issuer + "/account/sessions/end", data={"csrf": csrf, "sid": this_browser},
                cookies={"sso_session": cookie}).json()["error"] == "signed_out"


def test_password_and_totp_answers_of_the_real_flows_are_documented(stack):
    """The account page's password and TOTP forms as a browser posts them
    (a test user of this test's own, from a loopback address of its own, so
    its wrong guesses count against nothing another test uses): a password
    change refused and made, an authenticator app set up (a wrong first
    code, then the right one) and removed with the new password."""
    issuer = stack.issuer
    email, password, _ = new_user(stack)
    browser = client(stack, fresh_address())
    get, post = calls(stack, browser)
    app = App(stack, browser)
    assert post(issuer + "/login", data={"req": query(app.authorize().headers["Location"])["req"], "email": email,
                                         "password": password}).status_code == 303
    csrf = re.search(r'data-csrf="([A-Za-z0-9_-]+)"', get(issuer + "/account").text).group(1)

    def back(response, done):
        assert response.status_code == 303 and response.headers["Location"] == "/account?done=" + done, \
            (response.status_code, response.headers.get("Location"), response.text[:300])
        return response

    # The password: missing, mismatched, wrong, too short, then changed; this browser stays signed in.
    new_password = "pw-new-" + secrets.token_urlsafe(12)
    change = lambda current, new, confirm: post(issuer + "/account/password",  # noqa: E731
                                                data={"csrf": csrf, "current": current, "password": new, "confirm": confirm})
    back(post(issuer + "/account/password", data={"csrf": csrf, "current": password}), "password_missing")
    back(change(password, new_password, new_password + "x"), "password_mismatch")
    back(change("not-" + password, new_password, new_password), "password_wrong")
    back(change(password, "short", "short"), "password_too_short")
    back(change(password, new_password, new_password), "password_changed")
    assert get(issuer + "/account", params={"done": "password_changed"}).status_code == 200
    back(change(password, new_password, new_password), "password_wrong")  # the old one no longer counts

    # TOTP: the setup page with its key and sealed seed; a wrong code shows it again.
    back(post(issuer + "/account/totp/start", data={"csrf": csrf}), "password_missing")
    back(post(issuer + "/account/totp/start", data={"csrf": csrf, "current": password}), "totp_start_password_wrong")
    started = post(issuer + "/account/totp/start", data={"csrf": csrf, "current": new_password})
    assert started.status_code == 200 and 'id="totp-qr"' in started.text, started.text[:300]
    secret = re.search(r'<code class="totp-key" id="totp-secret">([A-Z2-7 ]+)</code>', started.text).group(1).replace(" ", "")
    pending = re.search(r'name="pending" value="([A-Za-z0-9_-]+)"', started.text).group(1)
    confirm = lambda code, sealed=pending: post(issuer + "/account/totp/confirm",  # noqa: E731
                                                data={"csrf": csrf, "pending": sealed, "code": code})
    near = {totp(secret, offset) for offset in (-2, -1, 0, 1, 2)}
    wrong = next(code for code in ("000000", "111111", "222222") if code not in near)
    again = confirm(wrong)
    assert again.status_code == 200 and 'id="totp-error"' in again.text and pending in again.text
    back(confirm("123456", sealed="x" + pending), "totp_expired")
    code = totp(secret)
    codes_page = confirm(code[:3] + " " + code[3:])
    assert codes_page.status_code == 200 and 'id="recovery-codes"' in codes_page.text, codes_page.text[:300]
    assert 'href="/account?done=totp_on"' in codes_page.text
    back(confirm(totp(secret)), "totp_already_on")
    back(post(issuer + "/account/totp/start", data={"csrf": csrf}), "totp_already_on")

    # Removing it: without, with the old, then with the new password.
    back(post(issuer + "/account/totp/remove", data={"csrf": csrf}), "password_missing")
    back(post(issuer + "/account/totp/remove", data={"csrf": csrf, "current": password}), "totp_password_wrong")
    back(post(issuer + "/account/totp/remove", data={"csrf": csrf, "current": new_password}), "totp_off")
    back(post(issuer + "/account/totp/remove", data={"csrf": csrf, "current": new_password}), "totp_off")

    # Signing in elsewhere takes the new password, and no code.
    other = App(stack, client(stack, fresh_address()))
    signed_in = other.login(other.authorize().headers["Location"], email=email, password=new_password)
    assert signed_in.status_code == 303 and "code=" in signed_in.headers["Location"], signed_in.headers


# ---- upstream providers -------------------------------------------------------

def test_federation_answers_of_the_real_flows_are_documented(stack, upstream):
    """Signing in through an upstream provider (a second real Gatehouse, as
    test_federated_sign_in.py runs it), which generated inputs cannot reach:
    the trip out, each kind of answer at the callback (GET, and a form post
    as Apple's), and the account page's unlinking."""
    issuer = stack.issuer
    http = http_session(stack)
    get, post = calls(stack, http)

    # A new account through the provider: out with the binding cookie, back (a form post) with a code.
    email = f"openapi-fed-{secrets.token_hex(4)}@corp.example"
    upstream_user(upstream, email)
    trip = Trip(stack, upstream, http)
    trip.leave()
    conforms(stack, trip.left)
    assert trip.left.headers["Set-Cookie"].startswith("gh_federation=") and "SameSite=None" in trip.left.headers["Set-Cookie"]
    answer = query(trip.sign_in_upstream(email))
    callback_form = {"state": answer["state"], "code": answer["code"], "iss": answer["iss"]}
    made = post(issuer + "/federation/callback", data=callback_form)
    assert made.status_code == 303 and made.headers["Location"].startswith(trip.app.redirect_uri + "?code="), made.text
    assert "sso_session" in http.cookies
    # Replayed: the state is spent and the binding cookie gone.
    replayed = post(issuer + "/federation/callback", data=callback_form)
    assert replayed.status_code == 400 and replayed.headers["Set-Cookie"].startswith("gh_federation=;")
    assert get(issuer + "/federation/callback").status_code == 400
    assert post(issuer + "/federation/callback", json=callback_form).status_code == 415

    # Its only way in cannot be unlinked; an unknown link is not found.
    upstream_sub = upstream.query("SELECT subject FROM users WHERE email = ?", email)[0][0]
    page = get(issuer + "/account")
    assert page.status_code == 200 and 'id="provider-links"' in page.text
    csrf = re.search(r'data-csrf="([A-Za-z0-9_-]+)"', page.text).group(1)
    for subject, done in ((upstream_sub, "provider_not_unlinked"), ("someone-else", "provider_not_found")):
        kept = post(issuer + "/account/links/remove", data={"csrf": csrf, "issuer": upstream.issuer, "subject": subject})
        assert kept.status_code == 303 and kept.headers["Location"] == "/account?done=" + done

    # No such provider: back to the login page, the pending request still waiting.
    other = http_session(stack)
    get_, post_ = calls(stack, other)
    trip = Trip(stack, upstream, other)
    unknown = post_(issuer + "/login/federation", data={"req": trip.req, "provider": "no-such-provider"})
    assert unknown.status_code == 303 and unknown.headers["Location"].endswith("&error=federation_failed"), unknown.headers
    assert query(unknown.headers["Location"])["req"] == trip.req and "Set-Cookie" not in unknown.headers

    # Cancelled at the provider: the app hears access_denied, and the pending request is over.
    trip.leave()
    conforms(stack, trip.left)
    cancelled = get_(issuer + "/federation/callback", params={"state": query(trip.at_provider)["state"], "error": "access_denied",
                                                              "iss": upstream.issuer})
    assert cancelled.status_code == 303 and query(cancelled.headers["Location"])["error"] == "access_denied"
    assert cancelled.headers["Location"].startswith(trip.app.redirect_uri + "?")
    expired = post_(issuer + "/login/federation", data={"req": trip.req, "provider": "corp"})
    assert expired.status_code == 303 and expired.headers["Location"] == "/login.html?error=expired"

    # Another issuer in the answer (a mix-up): back to the login page, federation_failed.
    trip = Trip(stack, upstream, http_session(stack))
    trip.leave()
    mixed = dict(query(trip.sign_in_upstream(email)), iss="https://attacker.example")
    failed = conforms(stack, trip.http.get(issuer + "/federation/callback", params=mixed, allow_redirects=False))
    assert failed.status_code == 303 and query(failed.headers["Location"])["error"] == "federation_failed"

    # No verified address and no link (an upstream user not linked yet: a link would sign in).
    unlinked_email = f"openapi-fed-{secrets.token_hex(4)}@corp.example"
    upstream_user(upstream, unlinked_email)
    trip = Trip(stack, upstream, http_session(stack), provider="corp-noemail")
    trip.leave()
    trip.sign_in_upstream(unlinked_email)
    no_email = conforms(stack, trip.come_back())
    assert no_email.status_code == 303 and query(no_email.headers["Location"])["error"] == "federation_no_email"

    # An existing account's address: its owner signs in to link it, then may unlink it (a password remains).
    local_email, password, _ = new_user(stack)
    upstream_user(upstream, local_email)
    browser = http_session(stack)
    get_, post_ = calls(stack, browser)
    trip = Trip(stack, upstream, browser)
    trip.leave()
    trip.sign_in_upstream(local_email)
    offered = conforms(stack, trip.come_back())
    assert offered.status_code == 303 and query(offered.headers["Location"])["error"] == "federation_link"
    assert query(offered.headers["Location"])["login_hint"] == local_email
    linked = post_(issuer + "/login", data={"req": trip.req, "email": local_email, "password": password})
    assert linked.status_code == 303 and linked.headers["Location"].startswith(trip.app.redirect_uri + "?code=")
    csrf = re.search(r'data-csrf="([A-Za-z0-9_-]+)"', get_(issuer + "/account").text).group(1)
    local_sub = upstream.query("SELECT subject FROM users WHERE email = ?", local_email)[0][0]
    unlinked = post_(issuer + "/account/links/remove", data={"csrf": csrf, "issuer": upstream.issuer, "subject": local_sub})
    assert unlinked.status_code == 303 and unlinked.headers["Location"] == "/account?done=provider_unlinked"


# ---- the admin API ------------------------------------------------------------

def test_admin_answers_of_the_real_flows_are_documented(stack, credentials):
    """Each kind of admin answer, made on purpose (random input reaches few
    of them): pages and their `Link`, creation with `Location`, ETags and a
    stale `If-Match`, a conflict, each kind of 400, 401 and 403 with their
    challenges (a read-only client writing, a DPoP-bound token, the demo
    user's token), 405, 413 and 415; every answer checked against the
    description. Everything made here is removed again."""
    admin = credentials["admin"]
    issuer = stack.issuer
    http = http_session(stack)

    def call(method, path, template=None, **kwargs):
        """`headers` replaces the admin token's (`{}`: no token at all)."""
        headers = kwargs.pop("headers", None)
        headers = admin.headers() if headers is None else headers
        response = http.request(method, issuer + ADMIN + path, headers=headers, allow_redirects=False, **kwargs)
        return conforms(stack, response, path=ADMIN + (template or path.split("?")[0]))

    def problem(response, status, kind=None):
        assert response.status_code == status, (response.status_code, response.text)
        body = response.json()
        assert body["type"] == ("urn:gatehouse:admin:" + kind if kind else "about:blank"), body
        return body

    # Pages: a first page of one, its `Link` and `next`, and the next page.
    for path in ("/users", "/clients", "/apis", "/sessions", "/keys"):
        first = call("GET", path, params={"limit": 1})
        assert first.status_code == 200 and len(first.json()["items"]) <= 1, first.text
        if first.json()["next"] is not None:
            assert first.headers["Link"].endswith('>; rel="next"'), first.headers
            assert call("GET", path, params={"limit": 1, "next": first.json()["next"]}).status_code == 200
    problem(call("GET", "/users", params={"emial": "x@example.com"}), 400, "invalid-query")
    problem(call("GET", "/users", params={"limit": 0}), 400, "invalid-query")
    problem(call("GET", "/clients", params={"next": "not-a-cursor"}), 400, "invalid-query")

    # A user: made, a conflict, read with its ETag, changed under If-Match, refused members, unlocked, deleted.
    email, password = f"openapi-flow-{secrets.token_hex(5)}@example.com", "pw-" + secrets.token_urlsafe(15)
    made = call("POST", "/users", json={"email": email, "name": "OpenAPI Flow", "password": password, "roles": ["user"]})
    assert made.status_code == 201, made.text
    user = made.json()["id"]
    problem(call("POST", "/users", json={"email": email, "name": "Again", "password": password}), 409, "conflict")
    problem(call("POST", "/users", data="[]", headers={**admin.headers(), "Content-Type": "application/json"}), 400, "malformed-body")
    problem(call("POST", "/users", data={"email": email}), 415)
    read = call("GET", f"/users/{user}", "/users/{id}")
    etag = read.headers["ETag"]
    problem(call("PATCH", f"/users/{user}", "/users/{id}", json={"name": "Stale"}, headers={**admin.headers(), "If-Match": '"stale"'}), 412)
    renamed = call("PATCH", f"/users/{user}", "/users/{id}", json={"name": "Renamed"}, headers={**admin.headers(), "If-Match": etag})
    assert renamed.status_code == 200 and renamed.headers["ETag"] != etag, renamed.text
    assert problem(call("PATCH", f"/users/{user}", "/users/{id}", json={"rolez": ["admin"]}), 400, "unknown-member")["member"] == "rolez"
    assert problem(call("PATCH", f"/users/{user}", "/users/{id}", json={"disabled": "yes"}), 400, "wrong-type")["member"] == "disabled"
    merged = call("PATCH", f"/users/{user}", "/users/{id}", data=json.dumps({"roles": ["user", "auditor"]}),
                  headers={**admin.headers(), "Content-Type": "application/merge-patch+json"})
    assert merged.status_code == 200 and sorted(merged.json()["roles"]) == ["auditor", "user"], merged.text
    assert call("POST", f"/users/{user}/unlock", "/users/{id}/unlock").json() == {"was_locked": False}
    assert call("GET", "/sessions", params={"user": user}).json()["items"] == []
    assert call("DELETE", f"/users/{user}", "/users/{id}").status_code == 204
    problem(call("GET", f"/users/{user}", "/users/{id}"), 404)

    # A client: made with a secret made for it (once), read without, changed, a new secret both ways, deleted.
    client_id = "openapi-flow-" + secrets.token_hex(4)
    machine = {"client_id": client_id, "grant_types": ["client_credentials"], "scopes": ["api:serverA"],
               "token_endpoint_auth_method": "client_secret_basic"}
    made = call("POST", "/clients", json=machine)
    assert made.status_code == 201 and made.json()["client_secret"], made.text
    assert "client_secret" not in call("GET", f"/clients/{client_id}", "/clients/{client_id}").json()
    problem(call("POST", "/clients", json=machine), 409, "conflict")
    problem(call("POST", "/clients", json={"client_id": "openapi-flow-" + secrets.token_hex(4), "scopes": ["no-such-scope"]}),
            400, "invalid-value")
    assert call("PATCH", f"/clients/{client_id}", "/clients/{client_id}", json={"name": "Flow", "access_token_ttl": None}).status_code == 200
    assert call("POST", f"/clients/{client_id}/secret", "/clients/{client_id}/secret").status_code == 200
    assert call("POST", f"/clients/{client_id}/secret", "/clients/{client_id}/secret",
                json={"client_secret": "openapi-" + secrets.token_urlsafe(24)}).status_code == 204
    assert call("DELETE", f"/clients/{client_id}", "/clients/{client_id}").status_code == 204

    # An API: made (Location by audience), found, removed.
    audience = f"https://openapi-flow-{secrets.token_hex(4)}.example/api"
    made = call("POST", "/apis", json={"audience": audience, "scopes": [f"openapi-flow-{secrets.token_hex(4)}:read"]})
    assert made.status_code == 201, made.text
    assert [api["audience"] for api in call("GET", "/apis", params={"audience": audience}).json()["items"]] == [audience]
    assert call("DELETE", "/apis", params={"audience": audience}).json() == {"clients_changed": []}
    problem(call("DELETE", "/apis", params={"audience": audience}), 404)

    # A signing key: rotated in (never to sign), read, retired, not twice.
    rotated = call("POST", "/keys/rotate")
    assert rotated.status_code == 201 and rotated.json()["state"] == "next", rotated.text
    kid = rotated.json()["kid"]
    admin.rotated.add(kid)
    assert call("GET", f"/keys/{kid}", "/keys/{kid}").json()["kid"] == kid
    assert call("POST", f"/keys/{kid}/retire", "/keys/{kid}/retire").json()["state"] == "retired"
    problem(call("POST", f"/keys/{kid}/retire", "/keys/{kid}/retire"), 409, "conflict")

    # A session: read, ended.
    sid = admin.target("session")
    assert call("GET", f"/sessions/{sid}", "/sessions/{sid}").json()["state"] == "active"
    assert call("DELETE", f"/sessions/{sid}", "/sessions/{sid}").status_code == 204
    admin.targets.pop("session", None)

    # Refusals at the door, with their challenges.
    no_token = call("GET", "/users", headers={})
    problem(no_token, 401)
    assert no_token.headers["WWW-Authenticate"] == f'Bearer realm="{issuer}"', no_token.headers
    garbled = call("GET", "/users", headers={"Authorization": "Bearer not-a-token"})
    problem(garbled, 401)
    assert 'error="invalid_token"' in garbled.headers["WWW-Authenticate"]
    demo_user = call("GET", "/users", headers={"Authorization": "Bearer " + credentials["bearer"]})
    assert demo_user.status_code in (401, 403), demo_user.text
    reader, reader_secret = "openapi-admin-read-" + secrets.token_hex(4), "openapi-" + secrets.token_urlsafe(18)
    admin.ssoctl("client", "add", reader, "--grant", "client_credentials", "--scope", "gatehouse:admin:read", "--secret-stdin",
                 input=reader_secret + "\n")
    read_token = http.post(issuer + "/token", auth=(reader, reader_secret),
                           data={"grant_type": "client_credentials", "scope": "gatehouse:admin:read"}).json()["access_token"]
    assert call("GET", "/keys", headers={"Authorization": "Bearer " + read_token}).status_code == 200
    writing = call("POST", "/keys/rotate", headers={"Authorization": "Bearer " + read_token})
    problem(writing, 403)
    assert writing.headers["WWW-Authenticate"] == f'Bearer realm="{issuer}", error="insufficient_scope", scope="gatehouse:admin"'

    # A DPoP-bound token: with a proof, as Bearer, without a proof.
    bound, bound_secret = "openapi-admin-dpop-" + secrets.token_hex(4), "openapi-" + secrets.token_urlsafe(18)
    admin.ssoctl("client", "add", bound, "--grant", "client_credentials", "--scope", "gatehouse:admin", "--require-dpop",
                 "--secret-stdin", input=bound_secret + "\n")
    key = ProofKey()
    issued, _ = token_request(http, issuer, {"grant_type": "client_credentials", "scope": "gatehouse:admin"}, key,
                              auth=(bound, bound_secret))
    assert issued.status_code == 200 and issued.json()["token_type"] == "DPoP", issued.text
    token, url = issued.json()["access_token"], issuer + ADMIN + "/keys"
    assert call("GET", "/keys", params={"limit": 1}, headers={"Authorization": "DPoP " + token,
                                                              "DPoP": key.proof("GET", url, access_token=token)}).status_code == 200
    as_bearer = call("GET", "/keys", headers={"Authorization": "Bearer " + token})
    problem(as_bearer, 401)
    assert as_bearer.headers["WWW-Authenticate"].startswith('DPoP algs="ES256 EdDSA RS256", error="invalid_token"')
    unproved = call("GET", "/keys", headers={"Authorization": "DPoP " + token})
    problem(unproved, 401)
    assert 'error="invalid_dpop_proof"' in unproved.headers["WWW-Authenticate"]
    for client in (reader, bound):
        admin.ssoctl("client", "delete", client)

    # A method the resource does not answer (before the token), and a body over 64 KiB.
    unanswered = http.put(issuer + ADMIN + "/users", json={}, headers=admin.headers())
    assert unanswered.status_code == 405 and unanswered.headers["Allow"] == "GET, POST", unanswered.headers
    assert unanswered.headers["Content-Type"].startswith("application/problem+json")
    too_large = call("POST", "/users", data=json.dumps({"name": "x" * 70000}), headers={**admin.headers(), "Content-Type": "application/json"})
    assert too_large.status_code == 413
