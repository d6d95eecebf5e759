"""TOTP on the account page through nginx, with cookie jars and no
JavaScript: set up an authenticator app (a server-drawn SVG QR code and
the key), confirm it with a code, and from the next sign-in on a code is
asked for; remove it with the current password and the sign-in no longer
asks."""
import html
import json
import os
import re

from test_account_password import form_token, signed_in
from test_account_security import client, code_page, fresh_address, new_user, post_code, post_password, rows, start, totp


def start_setup(stack, http, current="", **headers):
    return http.post(stack.issuer + "/account/totp/start", allow_redirects=False, headers=headers,
                     data={"csrf": form_token(stack, http), "current": current})


def setup_values(page):
    """The sealed pending setup and the key the page spells out."""
    pending = html.unescape(re.search(r'name="pending" value="([^"]+)"', page).group(1))
    key = re.search(r'id="totp-secret">([^<]+)<', page).group(1).replace(" ", "")
    return pending, key


def confirm(stack, http, pending, code):
    return http.post(stack.issuer + "/account/totp/confirm", allow_redirects=False,
                     data={"csrf": form_token(stack, http), "pending": pending, "code": code})


def remove(stack, http, current):
    return http.post(stack.issuer + "/account/totp/remove", allow_redirects=False,
                     data={"csrf": form_token(stack, http), "current": current})


def test_enrol_on_the_account_page_then_sign_in_with_a_code_then_remove_it(stack):
    email, password, _ = new_user(stack)
    here, _ = signed_in(stack, email, password)
    user_id = rows(stack, "SELECT id FROM users WHERE email = ?", email)[0][0]
    account = here.get(stack.issuer + "/account").text
    assert "Two-step sign-in" in account and 'action="/account/totp/start"' in account

    # Start: a page with an inline SVG QR code, the key and the code form; nothing stored.
    started = start_setup(stack, here, password)
    assert started.status_code == 200, started.text
    page = started.text
    assert "<svg " in page and 'role="img"' in page and 'shape-rendering="crispEdges"' in page
    assert "style=" not in page and "<style" not in page
    assert re.search(r'<input[^>]*name="code"[^>]*autocomplete="one-time-code"', page) or \
        re.search(r'<input[^>]*autocomplete="one-time-code"[^>]*name="code"', page)
    assert 'inputmode="numeric"' in page and 'action="/account/totp/confirm"' in page
    assert "style-src 'self'" in started.headers["Content-Security-Policy"]
    assert "no-store" in started.headers["Cache-Control"]
    pending, key = setup_values(page)
    assert re.fullmatch(r"[A-Z2-7]{32}", key)
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(0,)]

    # A wrong code enrols nothing and shows the setup again.
    wrong = "000000" if totp(key) != "000000" else "111111"
    again = confirm(stack, here, pending, wrong)
    assert again.status_code == 200 and 'id="totp-error"' in again.text
    assert setup_values(again.text) == (pending, key)
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(0,)]

    # Another browser of the same user cannot use this setup.
    there, _ = signed_in(stack, email, password)
    assert confirm(stack, there, pending, totp(key)).headers["Location"] == "/account?done=totp_expired"

    # The right code turns it on.
    used = totp(key)
    on = confirm(stack, here, pending, used)
    assert on.status_code == 303 and on.headers["Location"] == "/account?done=totp_on", on.text
    shown = here.get(stack.issuer + "/account?done=totp_on").text
    assert "Two-step sign-in is on" in shown and 'action="/account/totp/remove"' in shown
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(1,)]

    # A fresh sign-in asks for a code after the password and completes with it.
    fresh = client(stack, fresh_address())
    app, login_page = start(stack, fresh)
    first = post_password(stack, fresh, login_page, email, password)
    assert first.headers["Location"] == code_page(login_page)
    assert post_code(stack, fresh, login_page, used).headers["Location"] == code_page(login_page, "invalid_code"), \
        "the code that confirmed the setup is spent"
    tokens = app.exchange(app.code_from(post_code(stack, fresh, login_page, totp(key, offset=1))))
    assert tokens.status_code == 200, tokens.text
    assert rows(stack, "SELECT amr FROM sso_sessions WHERE user_id = ? AND amr = 'pwd otp'", user_id) == [("pwd otp",)]

    # Remove: the wrong password leaves it on; the right one turns it off.
    refused = remove(stack, here, password + "x")
    assert refused.headers["Location"] == "/account?done=totp_password_wrong"
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(1,)]
    off = remove(stack, here, password)
    assert off.status_code == 303 and off.headers["Location"] == "/account?done=totp_off"
    assert "Two-step sign-in is off" in here.get(stack.issuer + "/account?done=totp_off").text
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(0,)]

    # The sign-in no longer asks for a code.
    later = client(stack, fresh_address())
    app, login_page = start(stack, later)
    assert app.code_from(post_password(stack, later, login_page, email, password))

    with open(os.path.join(stack.home, "log", "audit.log"), encoding="utf-8") as handle:
        events = [json.loads(line) for line in handle if email in line]
    assert [event["event"] for event in events if event["event"].startswith("totp_")] == ["totp_enrolled", "totp_removed"]
    text = json.dumps(events)
    assert key not in text and pending not in text and password not in text


def test_cross_site_posts_are_refused(stack):
    email, password, _ = new_user(stack)
    here, _ = signed_in(stack, email, password)
    assert start_setup(stack, here, **{"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert start_setup(stack, here, Origin="https://evil.example").status_code == 403
    wrong_token = here.post(stack.issuer + "/account/totp/start", allow_redirects=False, data={"csrf": "x"})
    assert wrong_token.status_code == 403
