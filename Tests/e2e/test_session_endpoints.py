"""userinfo, RP-initiated logout, revocation and introspection through nginx with TLS."""
import base64
import json
import re
import secrets
from urllib.parse import urlsplit

import pytest

from oidc_flow import App, query

SERVICE_SECRET = "e2e-introspection-secret-" + secrets.token_hex(8)


def rows(stack, sql, *args):
    return stack.query(sql, *args)


def signed_in(stack, http, client_id="mobile-app-001", **kwargs):
    """Signs Alice in with `client_id` and returns the app and its token set."""
    app = App(stack, http, client_id=client_id, **kwargs)
    response = app.exchange(app.sign_in())
    assert response.status_code == 200, response.text
    return app, response.json()


# What the session endpoints could change. The stack's periodic sweep may
# delete expired codes and pending sign-ins of other tests at any moment, so
# those two tables stay out of the before/after comparisons.
TABLES = ["users", "clients", "client_redirect_uris", "signing_keys", "sso_sessions", "refresh_tokens", "revoked_access_tokens"]


def snapshot(stack):
    return {table: sorted(map(repr, rows(stack, f"SELECT * FROM {table}"))) for table in TABLES}


def claims(jwt):
    """A JWT's payload, unverified (the tests that need verification use the endpoints)."""
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def refresh(stack, http, refresh_token, client_id="mobile-app-001"):
    return http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                    "client_id": client_id})


@pytest.fixture(scope="module")
def service(stack):
    """A confidential client, made as an operator would make it."""
    client_id = "resource-server-" + secrets.token_hex(4)
    made = stack.ssoctl("client", "add", client_id, "--redirect-uri", "https://rs.example/cb", "--secret-stdin",
                        input=SERVICE_SECRET + "\n")
    assert made.returncode == 0, made.stderr
    assert "confidential" in made.stdout
    return client_id, SERVICE_SECRET


def introspect(stack, http, service, token, **extra):
    return http.post(stack.issuer + "/introspect", data={"token": token, **extra}, auth=service)


# ---- userinfo ---------------------------------------------------------------

def test_userinfo_returns_the_users_claims(stack, http):
    _, tokens = signed_in(stack, http)
    bearer = {"Authorization": "Bearer " + tokens["access_token"]}
    for response in (http.get(stack.issuer + "/userinfo", headers=bearer),
                     http.post(stack.issuer + "/userinfo", headers=bearer)):
        assert response.status_code == 200, response.text
        assert response.headers["Content-Type"] == "application/json"
        assert response.headers["Cache-Control"] == "no-store"
        body = response.json()
        assert body["email"] == "alice@example.com" and body["email_verified"] is True and body["name"] == "Alice Martin"
        assert body["sub"] and set(body) == {"sub", "email", "email_verified", "name"}
    form = http.post(stack.issuer + "/userinfo", data={"access_token": tokens["access_token"]})
    assert form.status_code == 200 and form.json()["sub"] == body["sub"]

    _, narrow = signed_in(stack, stack.session(), scope="openid")
    assert set(http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + narrow["access_token"]}).json()) == {"sub"}


def test_userinfo_errors_follow_rfc6750(stack, http):
    missing = http.get(stack.issuer + "/userinfo")
    assert missing.status_code == 401
    assert missing.headers["WWW-Authenticate"] == f'Bearer realm="{stack.issuer}"'
    assert missing.json()["error"] == "missing_token"

    garbage = http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer not.a.token"})
    assert garbage.status_code == 401
    assert 'error="invalid_token"' in garbage.headers["WWW-Authenticate"]
    assert garbage.json()["error"] == "invalid_token" and garbage.headers["Cache-Control"] == "no-store"

    _, tokens = signed_in(stack, http)
    in_query = http.get(stack.issuer + "/userinfo", params={"access_token": tokens["access_token"]})
    assert in_query.status_code == 400 and in_query.json()["error"] == "invalid_request"
    id_token = http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + tokens["id_token"]})
    assert id_token.status_code == 401, "an ID token is not an access token"

    for method in ("PUT", "DELETE", "PATCH"):
        wrong = http.request(method, stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]})
        assert wrong.status_code == 405 and wrong.headers["Allow"] == "GET, POST"


# ---- revocation -------------------------------------------------------------

def test_revoked_refresh_token_is_refused_by_the_refresh_grant(stack, http):
    _, tokens = signed_in(stack, http)
    response = http.post(stack.issuer + "/revoke", data={"token": tokens["refresh_token"], "token_type_hint": "refresh_token",
                                                         "client_id": "mobile-app-001"})
    assert response.status_code == 200 and response.content == b""
    assert response.headers["Cache-Control"] == "no-store"
    refused = refresh(stack, http, tokens["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    # Revoking again, or revoking garbage, is still 200 (RFC 7009 §2.2).
    for token in (tokens["refresh_token"], "garbage", "a.b.c"):
        assert http.post(stack.issuer + "/revoke", data={"token": token, "client_id": "mobile-app-001"}).status_code == 200


def test_a_revoked_refresh_token_takes_its_grants_access_tokens_at_the_issuer(stack, http, service):
    """RFC 7009 §2.1: revoking a refresh token SHOULD invalidate the access
    tokens of the same grant; the code exchange's and every rotation's stop
    at /userinfo and /introspect, another grant's do not."""
    _, tokens = signed_in(stack, http)
    rotated = refresh(stack, http, tokens["refresh_token"]).json()
    _, other = signed_in(stack, stack.session())
    for access_token in (tokens["access_token"], rotated["access_token"], other["access_token"]):
        assert introspect(stack, http, service, access_token).json()["active"] is True
    response = http.post(stack.issuer + "/revoke", data={"token": rotated["refresh_token"], "client_id": "mobile-app-001"})
    assert response.status_code == 200
    for access_token in (tokens["access_token"], rotated["access_token"]):
        assert http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + access_token}).status_code == 401
        assert introspect(stack, http, service, access_token).json() == {"active": False}
    assert introspect(stack, http, service, other["access_token"]).json()["active"] is True


def test_revoked_access_token_stops_working_at_the_issuer(stack, http, service):
    _, tokens = signed_in(stack, http)
    bearer = {"Authorization": "Bearer " + tokens["access_token"]}
    assert http.get(stack.issuer + "/userinfo", headers=bearer).status_code == 200
    response = http.post(stack.issuer + "/revoke", data={"token": tokens["access_token"], "client_id": "mobile-app-001"})
    assert response.status_code == 200
    assert http.get(stack.issuer + "/userinfo", headers=bearer).status_code == 401
    assert introspect(stack, http, service, tokens["access_token"]).json() == {"active": False}


def test_revocation_of_another_clients_token_does_nothing(stack, http, service):
    _, tokens = signed_in(stack, http, client_id="mobile-app-001")
    before = snapshot(stack)
    for token in (tokens["refresh_token"], tokens["access_token"]):
        response = http.post(stack.issuer + "/revoke", data={"token": token, "client_id": "mobile-app-002"})
        assert response.status_code == 200 and response.content == b"", "the same answer as for a revoked token"
    assert snapshot(stack) == before
    assert introspect(stack, http, service, tokens["access_token"]).json()["active"] is True
    assert refresh(stack, http, tokens["refresh_token"]).status_code == 200, "still the owner's to use"


def test_revocation_request_errors(stack, http):
    _, tokens = signed_in(stack, http)
    before = snapshot(stack)
    missing = http.post(stack.issuer + "/revoke", data={"client_id": "mobile-app-001"})
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    anonymous = http.post(stack.issuer + "/revoke", data={"token": tokens["refresh_token"]})
    assert anonymous.status_code == 401 and anonymous.json()["error"] == "invalid_client"
    wrong_secret = http.post(stack.issuer + "/revoke", data={"token": tokens["refresh_token"]}, auth=("mobile-app-001", "secret"))
    assert wrong_secret.status_code == 401 and wrong_secret.headers["WWW-Authenticate"].startswith("Basic")
    assert http.get(stack.issuer + "/revoke").status_code == 405
    assert snapshot(stack) == before


# ---- introspection ------------------------------------------------------------

def test_introspection_reports_active_tokens(stack, http, service):
    _, tokens = signed_in(stack, http)
    access = introspect(stack, http, service, tokens["access_token"])
    assert access.status_code == 200 and access.headers["Cache-Control"] == "no-store"
    body = access.json()
    assert body["active"] is True and body["token_type"] == "Bearer" and body["token_use"] == "access_token"
    assert body["client_id"] == "mobile-app-001" and body["username"] == "alice@example.com" and body["iss"] == stack.issuer
    assert body["aud"] == [stack.api_a, stack.api_b] and body["exp"] - body["iat"] == 900 and body["jti"] and body["sid"]

    refresh_body = introspect(stack, http, service, tokens["refresh_token"], token_type_hint="access_token").json()
    assert refresh_body["active"] is True and refresh_body["token_use"] == "refresh_token"
    assert refresh_body["sid"] == body["sid"] and refresh_body["sub"] == body["sub"]

    for token in ("garbage", tokens["id_token"], tokens["access_token"] + "x"):
        inactive = introspect(stack, http, service, token)
        assert inactive.status_code == 200 and inactive.text == '{"active":false}'


def test_introspection_needs_a_confidential_client(stack, http, service):
    _, tokens = signed_in(stack, http)
    cases = [
        ({}, None),
        ({"client_id": "mobile-app-001"}, None),
        ({}, ("mobile-app-001", "")),
        ({}, (service[0], "wrong-secret-wrong-secret")),
    ]
    for extra, auth in cases:
        response = http.post(stack.issuer + "/introspect", data={"token": tokens["access_token"], **extra}, auth=auth)
        assert response.status_code == 401, (extra, auth)
        assert response.json()["error"] == "invalid_client" and "active" not in response.json()
    assert http.get(stack.issuer + "/introspect", auth=service).status_code == 405


# ---- logout -------------------------------------------------------------------

def test_logout_ends_the_session_and_the_refresh_tokens(stack, http, service):
    app, tokens = signed_in(stack, http)
    assert http.cookies.get("sso_session")
    state = "st-" + secrets.token_urlsafe(8)
    response = http.get(stack.issuer + "/logout", params={"id_token_hint": tokens["id_token"],
                                                          "post_logout_redirect_uri": "myapp:auth/logout", "state": state},
                        allow_redirects=False)
    assert response.status_code == 303, response.text
    assert response.headers["Location"] == "myapp:auth/logout?state=" + state
    cleared = [c for c in response.headers["Set-Cookie"].split(", ") if c.startswith("sso_session=")][0]
    assert "Max-Age=0" in cleared and "Secure" in cleared and "HttpOnly" in cleared
    assert http.cookies.get("sso_session") is None

    refused = refresh(stack, http, tokens["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    sid = claims(tokens["access_token"])["sid"]
    assert rows(stack, "SELECT count(*) FROM refresh_tokens WHERE revoked_at IS NULL AND sid = ?", sid) == [(0,)]
    assert rows(stack, "SELECT count(*) FROM sso_sessions WHERE ended_at IS NOT NULL AND sid = ?", sid) == [(1,)]
    assert introspect(stack, http, service, tokens["access_token"]).json() == {"active": False}
    assert http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]}).status_code == 401

    # The browser must sign in again.
    again = app.authorize()
    assert again.status_code == 303 and again.headers["Location"].startswith("/login.html?client_id=")

    # Logging out twice is fine.
    twice = http.get(stack.issuer + "/logout", params={"id_token_hint": tokens["id_token"],
                                                       "post_logout_redirect_uri": "myapp:auth/logout", "state": state},
                     allow_redirects=False)
    assert twice.status_code == 303 and twice.headers["Location"] == "myapp:auth/logout?state=" + state


def test_logout_to_the_interstitial_page(stack, http):
    _, tokens = signed_in(stack, http)
    page = stack.issuer + "/mobile/postlogout.html"
    response = http.get(stack.issuer + "/logout", params={"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": page,
                                                          "state": "s 1&2"}, allow_redirects=False)
    assert response.status_code == 303
    location = response.headers["Location"]
    assert location.startswith(page + "?") and query(location) == {"state": "s 1&2"}
    interstitial = http.get(location)
    assert interstitial.status_code == 200 and "You are signed out" in interstitial.text
    assert stack.app_links + "/logout-callback?" + urlsplit(location).query in interstitial.text


def test_logout_without_a_hint_asks_first(stack, http):
    signed_in(stack, http)
    before = snapshot(stack)
    ask = http.get(stack.issuer + "/logout", allow_redirects=False)
    assert ask.status_code == 200 and "Sign out?" in ask.text and "Set-Cookie" not in ask.headers
    assert "default-src 'none'" in ask.headers["Content-Security-Policy"]
    assert snapshot(stack) == before
    # Typed by the user: the page does not say an app asked. It confirms
    # with a form that posts, never a link (a prefetch would sign out).
    assert "An app asked" not in ask.text and "You are about to sign out of Gatehouse" in ask.text
    assert '<form method="post" action="/logout" class="logout-confirm">' in ask.text and 'href="/logout' not in ask.text
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', ask.text))
    assert list(fields) == ["confirm"]
    followed = http.get(stack.issuer + "/logout", params=fields, allow_redirects=False)
    assert followed.status_code == 200 and "Sign out?" in followed.text, "a GET with the confirmation ends nothing"
    assert snapshot(stack) == before
    done = http.post(stack.issuer + "/logout", data=fields, allow_redirects=False)
    assert done.status_code == 200 and "You are signed out" in done.text
    assert http.cookies.get("sso_session") is None


def test_an_apps_logout_names_the_app_and_returns_to_it_after_the_form(stack, http):
    signed_in(stack, http)
    ask = http.get(stack.issuer + "/logout", params={"client_id": "mobile-app-001", "post_logout_redirect_uri": "myapp:auth/logout",
                                                      "state": "s1"}, allow_redirects=False)
    assert '<strong id="logout-app">Demo Mobile App 1</strong> asked to sign you out of Gatehouse' in ask.text
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', ask.text))
    assert {"client_id", "post_logout_redirect_uri", "state", "confirm"} <= set(fields)
    done = http.post(stack.issuer + "/logout", data=fields, allow_redirects=False)
    # form-action 'self' would block a redirect to myapp: after the form: a link instead.
    assert done.status_code == 200 and 'id="return-to-app" href="myapp:auth/logout?state=s1"' in done.text
    assert http.cookies.get("sso_session") is None


def test_logout_with_a_bad_redirect_shows_an_error_page_and_changes_nothing(stack, http):
    _, tokens = signed_in(stack, http)
    before = snapshot(stack)
    cases = [
        {"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": "https://evil.example/"},
        {"id_token_hint": tokens["id_token"], "post_logout_redirect_uri": "myapp:auth/callback"},
        {"post_logout_redirect_uri": "myapp:auth/logout", "state": "x"},
        {"client_id": "no-such-app", "post_logout_redirect_uri": "myapp:auth/logout"},
        {"id_token_hint": "garbage", "post_logout_redirect_uri": "myapp:auth/logout"},
        {"id_token_hint": tokens["access_token"]},
        {"id_token_hint": tokens["id_token"], "client_id": "mobile-app-002"},
    ]
    for parameters in cases:
        response = http.get(stack.issuer + "/logout", params=parameters, allow_redirects=False)
        assert response.status_code == 400, parameters
        assert "Location" not in response.headers and "Set-Cookie" not in response.headers
        assert response.headers["Content-Type"].startswith("text/html") and "Sign-out error" in response.text
    assert snapshot(stack) == before
    assert http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]}).status_code == 200


@pytest.mark.parametrize("path", ["/userinfo", "/logout", "/revoke", "/introspect"])
def test_hostile_requests_never_fail_the_server(stack, http, path):
    before = snapshot(stack)
    probes = [
        http.get(stack.issuer + path + "?%zz=%"),
        http.get(stack.issuer + path + "?state=%00%0D%0A&a=1&a=2"),
        http.post(stack.issuer + path, data="'; DROP TABLE users; --", headers={"Content-Type": "application/x-www-form-urlencoded"}),
        http.post(stack.issuer + path, data=b"token=%FF%FE", headers={"Content-Type": "application/x-www-form-urlencoded"}),
        http.post(stack.issuer + path, json={"token": "x"}),
        http.get(stack.issuer + path, headers={"Authorization": "Bearer a b", "Cookie": "sso_session=" + "x" * 3000}),
        http.delete(stack.issuer + path),
    ]
    for response in probes:
        assert response.status_code < 500, (path, response.status_code, response.text[:200])
        assert "\r" not in "".join(response.headers.values())
    assert snapshot(stack) == before
