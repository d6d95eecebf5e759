"""Pushed authorization requests (RFC 9126) through nginx with TLS and a
cookie jar: the app pushes its request to POST /par, then the browser opens
/authorize with client_id and request_uri alone. Single use, bound to the
client, short-lived, stored as a hash; every refused push is the token
endpoint's JSON error and changes nothing; `--require-par` and
GATEHOUSE_REQUIRE_PAR make pushing the only way in."""
import hashlib
import json
import os
import re
import secrets
import subprocess
import time

import pytest

from oidc_flow import App, query
from stack import Stack

URN = "urn:ietf:params:oauth:request_uri:"
CONFIDENTIAL = "par-service-" + secrets.token_hex(3)
CONFIDENTIAL_SECRET = "par-secret-" + secrets.token_hex(12)
CONFIDENTIAL_REDIRECT = "https://rp.example.test/cb"


def ok(result):
    assert result.returncode == 0, result.stderr
    return result


def request_form(app, **changes):
    """The app's whole authorization request as a form (what it would have
    put in the authorize URL); a None value leaves that parameter out."""
    form = query(app.authorize_url())
    form.update(changes)
    return {name: value for name, value in form.items() if value is not None}


def push(stack, http, app, auth=None, **changes):
    return http.post(stack.issuer + "/par", data=request_form(app, **changes), auth=auth)


def pushed_uri(stack, http, app, **changes):
    response = push(stack, http, app, **changes)
    assert response.status_code == 201, response.text
    return response.json()["request_uri"]


def by_reference(stack, http, request_uri, client_id="mobile-app-001", **ignored):
    """The browser's request: client_id and request_uri (and whatever else
    the test adds, which the issuer must ignore)."""
    parameters = {"client_id": client_id, "request_uri": request_uri, **ignored}
    return http.get(stack.issuer + "/authorize", params={k: v for k, v in parameters.items() if v is not None},
                    allow_redirects=False)


def uri_hash(request_uri):
    return hashlib.sha256(request_uri.encode()).digest()


def stored_row(stack, request_uri):
    rows = stack.query("SELECT client_id, parameters, created_at, expires_at, used_at FROM pushed_authorizations "
                       "WHERE request_uri_hash = ?", uri_hash(request_uri))
    assert len(rows) == 1, rows
    return rows[0]


def log_detail(stack, endpoint, response):
    """The `detail` of the responder's log line for this response (matched by
    its X-Request-Id); the line is written as the answer goes out."""
    request_id = response.headers["X-Request-Id"]
    deadline = time.time() + 5
    while time.time() < deadline:
        with open(os.path.join(stack.home, "log", f"{endpoint}.log"), encoding="utf-8") as handle:
            for line in handle:
                if request_id in line:
                    entry = json.loads(line)
                    if entry.get("request_id") == request_id:
                        return entry.get("detail")
        time.sleep(0.05)
    pytest.fail(f"no {endpoint} log line for request {request_id}")


def assert_error_page(stack, response, detail):
    assert response.status_code == 400, response.text
    assert "Location" not in response.headers, "nothing is trusted yet: never a redirect"
    assert response.headers["Content-Type"].startswith("text/html") and response.text.startswith("<!doctype html>")
    assert "expired or was already used" in response.text
    assert log_detail(stack, "authorize", response) == detail


@pytest.fixture(scope="module")
def confidential_client(stack):
    ok(stack.ssoctl("client", "add", CONFIDENTIAL, "--redirect-uri", CONFIDENTIAL_REDIRECT, "--scope", "openid",
                    "--scope", "profile", "--secret-stdin", input=CONFIDENTIAL_SECRET + "\n"))
    return CONFIDENTIAL


# ---------------------------------------------------------------- the push

def test_a_push_is_answered_201_with_a_short_lived_urn_stored_only_as_its_hash(stack, http):
    discovery = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert discovery["pushed_authorization_request_endpoint"] == stack.issuer + "/par"
    assert discovery["require_pushed_authorization_requests"] is False, "off unless GATEHOUSE_REQUIRE_PAR"

    app = App(stack, http)
    response = push(stack, http, app)
    assert response.status_code == 201, response.text
    assert response.headers["Content-Type"] == "application/json"
    assert response.headers["Cache-Control"] == "no-store" and response.headers["Pragma"] == "no-cache"
    body = response.json()
    assert sorted(body) == ["expires_in", "request_uri"]
    assert 60 <= body["expires_in"] <= 600 and body["expires_in"] == 90
    assert re.fullmatch(re.escape(URN) + r"[A-Za-z0-9_-]{43}", body["request_uri"]), body["request_uri"]

    client_id, parameters, created_at, expires_at, used_at = stored_row(stack, body["request_uri"])
    assert client_id == "mobile-app-001" and used_at is None
    assert expires_at - created_at == body["expires_in"] and abs(created_at - time.time()) < 60
    assert query("?" + parameters)["code_challenge"] == app.challenge and query("?" + parameters)["state"] == app.state
    reference = body["request_uri"][len(URN):]
    assert reference not in stack.database_dump(), "the request_uri is never stored in clear"
    assert pushed_uri(stack, http, app) != body["request_uri"], "every push gets a URI of its own"


def test_the_pushed_request_signs_in_and_its_parameters_are_the_ones_used(stack):
    http = stack.session()
    app = App(stack, http, scope="openid profile")
    request_uri = pushed_uri(stack, http, app)
    # A different scope, state, redirect URI and PKCE challenge in the query: ignored (RFC 9126 §4).
    first = by_reference(stack, http, request_uri, scope="openid email api:serverA", state="query-state",
                         redirect_uri=f"https://localhost:{stack.base}/mobile/postlogin.html", code_challenge="x" * 43,
                         prompt="none")
    assert first.status_code == 303 and first.headers["Location"].startswith("/login.html?client_id="), first.text
    login = app.login(first.headers["Location"])
    assert login.status_code == 303, login.text
    assert login.headers["Location"].startswith(app.redirect_uri + "?"), login.headers["Location"]
    code = app.code_from(login)  # checks the pushed state and iss came back
    tokens = app.exchange(code)
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["scope"] == "openid profile", "the pushed scope, not the query's"
    assert stored_row(stack, request_uri)[4] is not None, "claimed"


def test_a_request_uri_works_once(stack):
    http = stack.session()
    app = App(stack, http)
    request_uri = pushed_uri(stack, http, app)
    assert app.code_from(app.login(by_reference(stack, http, request_uri).headers["Location"]))
    before = stack.database_dump()
    again = by_reference(stack, http, request_uri)
    assert_error_page(stack, again, "request_uri refused: used")
    assert stack.database_dump() == before


def test_an_expired_request_uri_is_refused(stack, http):
    request_uri = pushed_uri(stack, http, App(stack, http))
    stack.execute("UPDATE pushed_authorizations SET expires_at = ? WHERE request_uri_hash = ?", int(time.time()) - 1,
                  uri_hash(request_uri))
    before = stack.database_dump()
    assert_error_page(stack, by_reference(stack, http, request_uri), "request_uri refused: expired")
    assert stack.database_dump() == before


def test_another_clients_request_uri_is_refused_and_stays_usable_by_its_own(stack, http):
    request_uri = pushed_uri(stack, http, App(stack, http))
    before = stack.database_dump()
    assert_error_page(stack, by_reference(stack, http, request_uri, client_id="mobile-app-002"), "request_uri refused: other client")
    assert stack.database_dump() == before
    assert by_reference(stack, http, request_uri).headers["Location"].startswith("/login.html?client_id=")


def test_an_unknown_request_uri_or_one_without_client_id_is_refused(stack, http):
    request_uri = pushed_uri(stack, http, App(stack, http))
    before = stack.database_dump()
    assert_error_page(stack, by_reference(stack, http, URN + "A" * 43), "request_uri refused: unknown")
    missing = by_reference(stack, http, request_uri, client_id=None)
    assert missing.status_code == 400 and "Location" not in missing.headers
    assert log_detail(stack, "authorize", missing) == "client_id missing"
    assert stack.database_dump() == before


# ---------------------------------------------------------------- refused pushes

REFUSED = [
    ("unregistered redirect_uri", {"redirect_uri": "myapp:evil"}, None, 400, "invalid_request"),
    ("unknown scope", {"scope": "openid nosuch:scope"}, None, 400, "invalid_scope"),
    ("missing code_challenge", {"code_challenge": None}, None, 400, "invalid_request"),
    ("plain PKCE", {"code_challenge_method": "plain"}, None, 400, "invalid_request"),
    ("request_uri in the body", {"request_uri": URN + "A" * 43}, None, 400, "invalid_request"),
    ("client_id other than the authenticated client", {}, (CONFIDENTIAL, CONFIDENTIAL_SECRET), 400, "invalid_request"),
    ("confidential client without its secret", {"client_id": CONFIDENTIAL, "redirect_uri": CONFIDENTIAL_REDIRECT,
                                                "scope": "openid"}, None, 401, "invalid_client"),
    ("confidential client with a wrong secret", {"client_id": None, "redirect_uri": CONFIDENTIAL_REDIRECT, "scope": "openid"},
     (CONFIDENTIAL, "wrong-" + CONFIDENTIAL_SECRET), 401, "invalid_client"),
]


@pytest.mark.parametrize("name, changes, auth, status, error", REFUSED, ids=[case[0] for case in REFUSED])
def test_a_refused_push_is_a_json_error_and_changes_nothing(stack, http, confidential_client, name, changes, auth, status, error):
    before = stack.database_dump()
    response = push(stack, http, App(stack, http), auth=auth, **changes)
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == "application/json" and response.headers["Cache-Control"] == "no-store"
    assert "Location" not in response.headers
    assert response.json()["error"] == error and response.json()["error_description"], response.text
    if status == 401 and auth:
        assert response.headers["WWW-Authenticate"].startswith("Basic "), "RFC 6749 §5.2: the scheme it used"
    assert stack.database_dump() == before


def test_par_takes_post_only(stack, http):
    before = stack.database_dump()
    response = http.get(stack.issuer + "/par", params=request_form(App(stack, http)))
    assert response.status_code == 405 and response.headers["Allow"] == "POST"
    assert response.json() == {"error": "method_not_allowed"}
    assert stack.database_dump() == before


def test_a_confidential_client_pushes_with_basic_and_signs_in(stack, confidential_client):
    """client_secret_basic and no client_id in the body: the header names the client."""
    http = stack.session()
    app = App(stack, http, client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_REDIRECT, scope="openid profile")
    response = http.post(stack.issuer + "/par", data=request_form(app, client_id=None), auth=(CONFIDENTIAL, CONFIDENTIAL_SECRET))
    assert response.status_code == 201, response.text
    request_uri = response.json()["request_uri"]
    assert stored_row(stack, request_uri)[0] == CONFIDENTIAL
    first = by_reference(stack, http, request_uri, client_id=CONFIDENTIAL)
    code = app.code_from(app.login(first.headers["Location"]))
    tokens = http.post(stack.issuer + "/token", data={"grant_type": "authorization_code", "code": code,
                                                      "redirect_uri": CONFIDENTIAL_REDIRECT, "code_verifier": app.verifier},
                       auth=(CONFIDENTIAL, CONFIDENTIAL_SECRET))
    assert tokens.status_code == 200 and tokens.json()["scope"] == "openid profile", tokens.text


# ---------------------------------------------------------------- requiring PAR

def test_a_client_updated_with_require_par_must_push(stack):
    http = stack.session()
    ok(stack.ssoctl("client", "add", "par-only-app", "--redirect-uri", "com.par.app:/cb"))
    ok(stack.ssoctl("client", "update", "par-only-app", "--require-par"))
    app = App(stack, http, client_id="par-only-app", redirect_uri="com.par.app:/cb", scope="openid")

    before = stack.database_dump()
    direct = app.authorize()
    assert direct.status_code == 303
    refused = query(direct.headers["Location"])
    assert direct.headers["Location"].startswith("com.par.app:/cb?")
    assert refused["error"] == "invalid_request" and refused["state"] == app.state and refused["iss"] == stack.issuer
    assert log_detail(stack, "authorize", direct) == "authorization error redirect: invalid_request: client par-only-app requires PAR"
    assert stack.database_dump() == before

    first = by_reference(stack, http, pushed_uri(stack, http, app), client_id="par-only-app")
    tokens = app.exchange(app.code_from(app.login(first.headers["Location"])))
    assert tokens.status_code == 200, tokens.text


def test_gatehouse_login_reports_a_refused_push_before_opening_anything(stack, tmp_path):
    result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "gatehouse-login"), "login", "--issuer", stack.issuer,
                             "--client-id", "mobile-app-001", "--ca-file", stack.ca, "--store", str(tmp_path / "tokens.json"),
                             "--scope", "openid nosuch:scope", "--timeout", "5"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "pushed authorization request refused: invalid_scope" in result.stderr, result.stderr
    assert result.stdout == "", "no authorize URL to open"
    assert not (tmp_path / "tokens.json").exists()


@pytest.fixture(scope="module")
def par_required_stack():
    running = Stack(extra_env={"GATEHOUSE_REQUIRE_PAR": "1", "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}).start()
    yield running
    running.remove()


def test_gatehouse_require_par_makes_every_client_push(par_required_stack):
    stack = par_required_stack
    http = stack.session()
    discovery = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert discovery["require_pushed_authorization_requests"] is True
    for client_id in ("mobile-app-001", "mobile-app-002"):
        direct = App(stack, http, client_id=client_id).authorize()
        assert direct.status_code == 303 and query(direct.headers["Location"])["error"] == "invalid_request", client_id
        assert log_detail(stack, "authorize", direct).endswith("GATEHOUSE_REQUIRE_PAR: every client must push")
    app = App(stack, http)
    first = by_reference(stack, http, pushed_uri(stack, http, app))
    assert app.exchange(app.code_from(app.login(first.headers["Location"]))).status_code == 200
