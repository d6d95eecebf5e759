"""Scenario 1, 2A and 2D end to end through nginx with TLS and a cookie jar."""
import time

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from oidc_flow import App, query


def jwks(stack, http):
    return KeySet.import_key_set(http.get(stack.issuer + "/.well-known/jwks.json").json())


def rows(stack, sql):
    return stack.query(sql)


def test_first_sign_in_yields_verifiable_tokens(stack, http):
    app = App(stack, http)
    first = app.authorize(login_hint="alice@example.com")
    assert first.status_code == 303
    assert first.headers["Location"].startswith("/login.html?client_id=")
    assert "login_hint=alice%40example.com" in first.headers["Location"]
    cookie = first.headers["Set-Cookie"]
    assert cookie.startswith("gh_login=") and "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Strict" in cookie
    page = http.get(stack.issuer + first.headers["Location"])
    assert page.status_code == 200 and 'name="req"' in page.text
    login = app.login(first.headers["Location"])
    assert login.status_code == 303
    session_cookie = [c for c in login.headers["Set-Cookie"].split(", ") if c.startswith("sso_session=")][0]
    for attribute in ("HttpOnly", "Secure", "SameSite=Lax", "Path=/"):
        assert attribute in session_cookie
    assert "Domain" not in session_cookie
    code = app.code_from(login)

    response = app.exchange(code)
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store" and response.headers["Pragma"] == "no-cache"
    body = response.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 900
    assert set(body["scope"].split()) == set(app.scope.split())
    assert body["refresh_token"]

    keys = jwks(stack, http)
    id_token = jwt.decode(body["id_token"], keys, algorithms=["RS256"])
    assert id_token.header["typ"] == "JWT"
    claims = id_token.claims
    assert claims["iss"] == stack.issuer and claims["aud"] == "mobile-app-001" and claims["nonce"] == app.nonce
    assert claims["email"] == "alice@example.com" and claims["email_verified"] is True and claims["name"] == "Alice Martin"
    assert claims["sid"] and claims["auth_time"] <= time.time() + 1

    access = jwt.decode(body["access_token"], keys, algorithms=["RS256"])
    assert access.header["typ"] == "at+jwt"
    assert access.claims["aud"] == [stack.api_a, stack.api_b]
    assert access.claims["sub"] == claims["sub"] and access.claims["sid"] == claims["sid"]
    assert access.claims["exp"] - access.claims["iat"] == 900
    assert access.claims["client_id"] == "mobile-app-001" and access.claims["roles"] == ["user"]

    # Scenario 2A: the token works at both resource servers.
    bearer = {"Authorization": "Bearer " + body["access_token"]}
    data = http.get(stack.api_a + "/api/data", headers=bearer)
    assert data.status_code == 200, data.text
    assert data.json()["user"] == "alice@example.com" and data.json()["source"] == "ServerA"
    records = http.get(stack.api_b + "/api/records", headers=bearer)
    assert records.status_code == 200, records.text
    assert records.json()["source"] == "ServerB"


def test_secrets_are_stored_hashed(stack, http):
    app = App(stack, http)
    code = app.sign_in()
    refresh = app.exchange(code).json()["refresh_token"]
    dump = stack.database_dump()
    assert code not in dump and refresh not in dump
    session = http.cookies.get("sso_session")
    assert session and session not in dump


def test_second_authorization_with_the_sso_cookie_skips_the_login_page(stack, http):
    App(stack, http).sign_in()
    for client in ("mobile-app-001", "mobile-app-002"):
        app = App(stack, http, client_id=client)
        response = app.authorize()
        assert response.status_code == 303
        code = app.code_from(response)
        assert app.exchange(code).status_code == 200


def test_prompt_none_without_and_with_a_session(stack):
    http = stack.session()
    app = App(stack, http)
    response = app.authorize(prompt="none")
    assert response.status_code == 303
    parameters = query(response.headers["Location"])
    assert parameters["error"] == "login_required"
    assert parameters["state"] == app.state and parameters["iss"] == stack.issuer
    app.sign_in()
    again = App(stack, http)
    assert "code" in query(again.authorize(prompt="none").headers["Location"])
    assert again.authorize(prompt="login").headers["Location"].startswith("/login.html?client_id=")


def test_code_reuse_is_refused_and_revokes_what_the_first_use_issued(stack, http):
    app = App(stack, http)
    code = app.sign_in()
    first = app.exchange(code)
    assert first.status_code == 200
    jti = jwt.decode(first.json()["access_token"], jwks(stack, http)).claims["jti"]
    second = app.exchange(code)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert rows(stack, f"SELECT count(*) FROM revoked_access_tokens WHERE jti = '{jti}'") == [(1,)]
    revoked = rows(stack, "SELECT count(*) FROM refresh_tokens WHERE revoked_at IS NOT NULL")
    assert revoked[0][0] >= 1


def test_wrong_verifier_client_or_redirect_is_refused_and_leaves_the_code_usable(stack, http):
    app = App(stack, http)
    code = app.sign_in()
    before = stack.database_dump()
    other_verifier = App(stack, http).verifier
    for attempt in (app.exchange(code, verifier=other_verifier),
                    app.exchange(code, redirect_uri="https://localhost/mobile/postlogin.html"),
                    app.exchange(code, client_id="mobile-app-002")):
        assert attempt.status_code == 400 and attempt.json()["error"] == "invalid_grant", attempt.text
    assert app.exchange(code, verifier="short").json()["error"] == "invalid_request"
    assert stack.database_dump() == before
    assert app.exchange(code).status_code == 200


def test_wrong_password_returns_to_the_form_without_a_code(stack):
    http = stack.session()
    app = App(stack, http)
    first = app.authorize()
    before = rows(stack, "SELECT count(*) FROM authorization_codes")
    failed = app.login(first.headers["Location"], password="not the password")
    assert failed.status_code == 303
    # The same page with the error, and the address typed kept for the form.
    assert failed.headers["Location"] == first.headers["Location"] + "&error=invalid_credentials&login_hint=alice@example.com"
    assert "sso_session" not in failed.headers.get("Set-Cookie", "")
    assert rows(stack, "SELECT count(*) FROM authorization_codes") == before
    assert app.code_from(app.login(first.headers["Location"]))


def test_interstitial_and_loopback_redirects(stack):
    interstitial = App(stack, stack.session(), redirect_uri=stack.issuer + "/mobile/postlogin.html")
    code = interstitial.sign_in()
    assert interstitial.exchange(code).status_code == 200
    loopback = App(stack, stack.session(), redirect_uri="http://127.0.0.1:51234/callback")
    assert loopback.exchange(loopback.sign_in()).status_code == 200


@pytest.mark.parametrize("override,expected", [
    ({"client_id": "nope"}, 400), ({"client_id": None}, 400),
    ({"redirect_uri": "https://evil.example/cb"}, 400), ({"redirect_uri": "http://127.0.0.1.evil.example/callback"}, 400),
])
def test_untrusted_client_or_redirect_gets_an_error_page_not_a_redirect(stack, http, override, expected):
    response = App(stack, http).authorize(**override)
    assert response.status_code == expected
    assert "Location" not in response.headers
    assert response.headers["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("override,error", [
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"code_challenge_method": "plain"}, "invalid_request"),
    ({"code_challenge": None}, "invalid_request"),
    ({"scope": "openid admin"}, "invalid_scope"),
    ({"request": "eyJ.x.y"}, "invalid_request_object"),
])
def test_bad_authorization_requests_redirect_with_an_error_state_and_iss(stack, http, override, error):
    app = App(stack, http)
    response = app.authorize(**override)
    assert response.status_code == 303
    parameters = query(response.headers["Location"])
    assert parameters["error"] == error
    assert parameters["state"] == app.state and parameters["iss"] == stack.issuer


def test_hostile_values_never_break_headers_or_the_database(stack, http):
    app = App(stack, http)
    # Valid but odd (VSCHAR) values are accepted and stay inert; invalid ones
    # (control characters, oversize) are refused and change nothing.
    odd = ["<script>alert(1)</script>", "'; DROP TABLE users; --", "\"><img src=x>"]
    invalid = ["a\r\nSet-Cookie: evil=1", "x" * 5000, "nul\u0000byte", "caf\u00e9\u2028"]
    for value in odd + invalid:
        for name in ("state", "nonce", "login_hint", "scope", "client_id", "redirect_uri", "code_challenge"):
            before = stack.database_dump() if value in invalid else None
            response = http.get(app.authorize_url(**{name: value}), allow_redirects=False)
            assert response.status_code < 500, (name, value)
            assert "evil=1" not in response.headers.get("Set-Cookie", "")
            assert "<script>" not in response.text and "<img src=x>" not in response.text
            assert "\r" not in response.headers.get("Location", "") and "\n" not in response.headers.get("Location", "")
            if before is not None:
                assert stack.database_dump() == before, (name, value)
        before = stack.database_dump()
        token = http.post(stack.issuer + "/token", data={"grant_type": "authorization_code", "code": value,
                                                         "client_id": "mobile-app-001", "redirect_uri": value,
                                                         "code_verifier": value})
        assert token.status_code in (400, 401) and token.json()["error"]
        assert stack.database_dump() == before
    # A bad request's error redirect never echoes an invalid state.
    response = app.authorize(response_type="token", state="a\r\nb")
    assert query(response.headers["Location"])["error"] == "unsupported_response_type"
    assert "state" not in query(response.headers["Location"])
