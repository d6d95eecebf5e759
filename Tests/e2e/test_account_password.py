"""The account page's password change through nginx, with cookie jars: the
current password is required and throttled like a sign-in, the new one is
checked, and the change ends every other sign-in with its tokens while the
browser that made it stays signed in."""
import json
import os
import re

from oidc_flow import App
from test_account_security import client, fresh_address, new_user, post_password, start


def signed_in(stack, email, password):
    """A cookie jar signed in as `email` and its token response."""
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    code = app.code_from(post_password(stack, http, login_page, email, password))
    tokens = app.exchange(code)
    assert tokens.status_code == 200, tokens.text
    return http, tokens.json()


def form_token(stack, http):
    page = http.get(stack.issuer + "/account")
    assert page.status_code == 200
    return re.search(r'data-csrf="([^"]+)"', page.text).group(1)


def change(stack, http, current, password, confirm=None, csrf=None, **headers):
    return http.post(stack.issuer + "/account/password", allow_redirects=False, headers=headers,
                     data={"csrf": csrf or form_token(stack, http), "current": current, "password": password,
                           "confirm": password if confirm is None else confirm})


def refreshes(stack, tokens):
    response = stack.session().post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": "mobile-app-001",
                                                                   "refresh_token": tokens["refresh_token"]})
    return response.status_code == 200


def test_a_password_change_needs_the_current_password_and_ends_the_other_sign_ins(stack):
    email, password, _ = new_user(stack)
    here, here_tokens = signed_in(stack, email, password)
    there, there_tokens = signed_in(stack, email, password)

    for current, new, confirm, notice in ((password + "x", "new password 1", None, "password_wrong"),
                                          (password, "new password 1", "new password 2", "password_mismatch"),
                                          (password, "short", None, "password_too_short"),
                                          (password, "baseball", None, "password_common"),
                                          (password, email.upper(), None, "password_email")):
        refused = change(stack, here, current, new, confirm)
        assert refused.status_code == 303 and refused.headers["Location"] == "/account?done=" + notice, refused.text
    assert "The current password is wrong." in here.get(stack.issuer + "/account?done=password_wrong").text
    assert "10,000 most common" in here.get(stack.issuer + "/account?done=password_common").text
    # Nothing changed yet: the old password still signs in, both sign-ins live.
    signed_in(stack, email, password)
    assert refreshes(stack, there_tokens)

    changed = change(stack, here, password, "a brand new password")
    assert changed.status_code == 303 and changed.headers["Location"] == "/account?done=password_changed"
    page = here.get(stack.issuer + "/account?done=password_changed")
    assert "Your password was changed." in page.text and email in page.text  # this browser stays signed in
    assert not refreshes(stack, there_tokens)  # the other sign-in ended with its tokens
    assert 'id="account-sign-in"' in there.get(stack.issuer + "/account").text, "signed out: sent to sign in again"
    signed_in(stack, email, "a brand new password")
    jar = client(stack, fresh_address())
    _, login_page = start(stack, jar)
    assert "&error=invalid_credentials&" in post_password(stack, jar, login_page, email, password).headers["Location"]

    with open(os.path.join(stack.home, "log", "audit.log"), encoding="utf-8") as handle:
        events = [json.loads(line) for line in handle if email in line]
    assert [event["event"] for event in events if event["event"].startswith("password_")] == ["password_change_refused",
                                                                                                "password_changed"]
    text = json.dumps(events)
    assert password not in text and "a brand new password" not in text


def test_a_wrong_current_password_counts_toward_the_account_lock(stack):
    email, password, _ = new_user(stack)
    here, _ = signed_in(stack, email, password)
    notices = [change(stack, here, "wrong " + password, "another new password").headers["Location"] for _ in range(6)]
    assert notices[:5] == ["/account?done=password_wrong"] * 5 and notices[5] == "/account?done=password_locked"


def test_a_cross_site_or_tokenless_change_is_refused_and_changes_nothing(stack):
    email, password, _ = new_user(stack)
    here, _ = signed_in(stack, email, password)
    before = stack.database_dump()
    assert change(stack, here, password, "a brand new password", **{"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert change(stack, here, password, "a brand new password", csrf="not-the-token").status_code == 403
    assert change(stack, stack.session(), password, "a brand new password", csrf="x").status_code == 401
    assert stack.database_dump() == before
