"""The outside review of 2026-11, finding by finding, through the real stack
(nginx, TLS, SQLite): each request that once got through is refused now,
with a 4xx that says why, and the database is left as it was.

The NUL-byte lock bypass itself is in test_account_security.py (it needs
the throttle helpers there); the Native SSO findings in test_native_sso.py."""

from oidc_flow import App, query


def snapshot(stack):
    """Every row of every table but the two a request may touch on its way
    (the throttle's counters, expired pending requests swept), to show a
    refusal changed nothing."""
    return [line for line in stack.database_dump().splitlines()
            if not line.startswith(("login_throttle", "pending_authorizations",
                                    "INSERT INTO login_throttle", "INSERT INTO pending_authorizations"))]


def test_a_nul_in_redirect_uri_or_client_id_at_token_is_a_400_and_the_code_stays_usable(stack, http):
    app = App(stack, http)
    code = app.sign_in()
    before = snapshot(stack)
    for name, overrides in (("redirect_uri", {"redirect_uri": app.redirect_uri + "\x00x"}),
                            ("client_id", {"client_id": app.client_id + "\x00x"})):
        refused = app.exchange(code, **overrides)
        assert refused.status_code == 400, refused.text
        assert refused.json() == {"error": "invalid_request", "error_description": f"parameter {name} contains a control character"}
    assert snapshot(stack) == before
    assert app.exchange(code).status_code == 200


def test_a_nul_in_client_id_at_authorize_is_an_error_page_not_a_redirect(stack, http):
    app = App(stack, http, client_id="mobile-app-001\x00x")
    page = app.authorize()
    assert page.status_code == 400
    assert "Location" not in page.headers
    assert "client_id contains a control character" in page.text


def test_a_spent_code_without_the_verifier_revokes_nothing(stack, http):
    app = App(stack, http)
    code = app.sign_in()
    first = app.exchange(code).json()
    # Someone who read the used code from the browser's history replays it,
    # without the app's PKCE verifier.
    replay = app.exchange(code, verifier="x" * 43)
    assert replay.status_code == 400 and replay.json()["error_description"] == "the code was already used"
    refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": app.client_id,
                                                         "refresh_token": first["refresh_token"]})
    assert refreshed.status_code == 200, "the victim's refresh token still works"


def test_prompt_consent_is_consent_required(stack, http):
    app = App(stack, http)
    response = app.authorize(prompt="consent")
    assert response.status_code == 303
    parameters = query(response.headers["Location"])
    assert parameters["error"] == "consent_required" and parameters["state"] == app.state and parameters["iss"] == stack.issuer


def test_prompt_none_with_another_users_id_token_hint_is_login_required(stack, http):
    email, password = "hint-bob@example.com", "bob's long password"
    added = stack.ssoctl("user", "add", email, "--name", "Bob", "--password-stdin", input=password + "\n")
    assert added.returncode == 0, added.stderr
    bob = App(stack, stack.session())
    first = bob.authorize()
    bobs_hint = bob.exchange(bob.code_from(bob.login(first.headers["Location"], email=email, password=password))).json()["id_token"]
    alice = App(stack, http)
    alice.exchange(alice.sign_in())
    answer = alice.authorize(prompt="none", id_token_hint=bobs_hint)
    assert query(answer.headers["Location"])["error"] == "login_required"
    assert "code" not in query(answer.headers["Location"]), "never Alice's code for Bob's hint"


def test_introspection_asks_who_is_calling_before_reading_the_body(stack, http):
    for body, content_type in (("", "application/x-www-form-urlencoded"), ("%zz", "application/x-www-form-urlencoded"),
                               ('{"token": "x"}', "application/json")):
        response = http.post(stack.issuer + "/introspect", data=body, headers={"Content-Type": content_type})
        assert response.status_code == 401, (body, response.text)
        assert response.json()["error"] == "invalid_client"


def test_the_token_endpoint_names_each_code_exchange_mistake(stack, http):
    app = App(stack, http)
    code = app.sign_in()
    for overrides, description in (
            ({"redirect_uri": stack.issuer + "/mobile/postlogin.html"}, "redirect_uri does not match the authorization request"),
            ({"code_verifier": "y" * 43}, "code_verifier does not match the code_challenge"),
            ({"client_id": "mobile-app-002"}, "the code was issued to another client")):
        response = app.exchange(code, **overrides)
        assert response.json() == {"error": "invalid_grant", "error_description": description}
    log = open(stack.home + "/log/token.log", encoding="utf-8").read()
    assert "PKCE verification failed; code still usable" in log
    assert code not in log
