"""TOTP on the account page through nginx, with cookie jars and no
JavaScript: set up an authenticator app (a server-drawn SVG QR code and
the key), confirm it with a code, and from the next sign-in on a code is
asked for; the ten recovery codes shown once at setup each sign in once in
place of a code, and a new set needs the current password; remove it with
the current password and the sign-in no longer asks."""
import hashlib
import html
import json
import os
import re

from test_account_password import form_token, signed_in
from oidc_flow import query
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


def recovery_codes(page):
    return re.findall(r"<li><code>([0-9a-z-]+)</code></li>", page)


def post_recovery_code(stack, http, login_page, code):
    return http.post(stack.issuer + "/login", allow_redirects=False,
                     data={"req": query(login_page)["req"], "recovery_code": code})


def remove(stack, http, current):
    return http.post(stack.issuer + "/account/totp/remove", allow_redirects=False,
                     data={"csrf": form_token(stack, http), "current": current})


def test_enrol_on_the_account_page_then_sign_in_with_a_code_then_remove_it(stack):
    email, password, _ = new_user(stack)
    here, _ = signed_in(stack, email, password)
    user_id = rows(stack, "SELECT id FROM users WHERE email = ?", email)[0][0]
    account = here.get(stack.issuer + "/account").text
    assert "Two-step sign-in" in account and 'action="/account/confirm"' in account
    assert 'action="/account/totp/start"' not in account, "the setup waits for \"confirm it's you\""

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
    assert on.status_code == 200, on.text
    assert "no-store" in on.headers["Cache-Control"], "the recovery codes are not cached"
    codes = recovery_codes(on.text)
    assert len(codes) == 10 and len(set(codes)) == 10, on.text
    assert all(re.fullmatch(r"[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}", code) for code in codes), codes
    assert 'href="/account?done=totp_on"' in on.text
    stored = {bytes(row[0]) for row in rows(stack, "SELECT code_hash FROM totp_recovery_codes WHERE user_id = ?", user_id)}
    assert stored == {hashlib.sha256(code.replace("-", "").encode()).digest() for code in codes}, "stored as SHA-256 only"
    shown = here.get(stack.issuer + "/account?done=totp_on").text
    assert "Two-step sign-in is on" in shown and "Recovery codes left: 10 of 10." in shown
    assert 'action="/account/totp/remove"' not in shown, "removing it waits for \"confirm it's you\""
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(1,)]

    # Without the phone: the code page links to the recovery form, and a
    # recovery code (typed in capitals, with spaces) signs in once.
    lost = client(stack, fresh_address())
    lost_app, lost_page = start(stack, lost)
    assert post_password(stack, lost, lost_page, email, password).headers["Location"] == code_page(lost_page)
    code_form = lost.get(stack.issuer + code_page(lost_page)).text
    link = html.unescape(re.search(r'id="use-recovery-code" href="([^"]+)"', code_form).group(1))
    recovery_form = lost.get(stack.issuer + link).text
    assert 'name="recovery_code"' in recovery_form and "<!--#" not in recovery_form
    typed = codes[0].upper().replace("-", " ")
    tokens = lost_app.exchange(lost_app.code_from(post_recovery_code(stack, lost, lost_page, typed)))
    assert tokens.status_code == 200, tokens.text
    assert rows(stack, "SELECT count(*) FROM totp_recovery_codes WHERE user_id = ?", user_id) == [(9,)]
    assert rows(stack, "SELECT amr FROM sso_sessions WHERE user_id = ? AND amr = 'pwd mfa'", user_id) == [("pwd mfa",)]
    audit = [json.loads(line) for line in open(os.path.join(stack.home, "log", "audit.log"))]
    used_event = [event for event in audit if event["event"] == "recovery_code_used" and event["user"] == email]
    assert len(used_event) == 1 and used_event[0]["reason"] == "9 left", used_event
    assert codes[0] not in json.dumps(audit)
    # The same code again, from another browser: refused, nothing signed in.
    again = client(stack, fresh_address())
    _, again_page = start(stack, again)
    post_password(stack, again, again_page, email, password)
    refused = post_recovery_code(stack, again, again_page, codes[0])
    assert refused.headers["Location"] == code_page(again_page, "invalid_recovery_code") + "&recovery=1"
    assert "That is not one of your unused recovery codes." in again.get(stack.issuer + refused.headers["Location"]).text
    assert "sso_session" not in again.cookies

    # A new set needs the current password, and voids the old one.
    wrong = here.post(stack.issuer + "/account/totp/recovery-codes", allow_redirects=False,
                      data={"csrf": form_token(stack, here), "current": password + "x"})
    assert wrong.headers["Location"] == "/account?done=recovery_password_wrong"
    renewed = here.post(stack.issuer + "/account/totp/recovery-codes", allow_redirects=False,
                        data={"csrf": form_token(stack, here), "current": password})
    new_codes = recovery_codes(renewed.text)
    assert len(new_codes) == 10 and not set(new_codes) & set(codes)
    assert rows(stack, "SELECT count(*) FROM totp_recovery_codes WHERE user_id = ?", user_id) == [(10,)]

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
    assert rows(stack, "SELECT count(*) FROM totp_recovery_codes WHERE user_id = ?", user_id) == [(0,)], "the codes go with it"

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
