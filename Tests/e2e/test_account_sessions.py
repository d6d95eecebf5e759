"""The account page's "Sessions and devices" through nginx, with cookie jars
and no browser: each sign-in of a user is listed with its browser (from the
User-Agent at sign-in), its address and its apps; signing one out from
another browser ends its refresh token; "Sign out everywhere" ends them all,
this browser's included; a cross-site or tokenless post changes nothing."""
import html
import json
import os
import re

from test_account_security import client, fresh_address, new_user, post_password, start

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")
SAME_ORIGIN = {"Sec-Fetch-Site": "same-origin"}


class Browser:
    """One cookie jar with its own User-Agent and loopback address, signed
    in as `email` for mobile-app-001: its page, its sid, its tokens."""

    def __init__(self, stack, email, password, user_agent):
        self.stack, self.address = stack, fresh_address()
        self.http = client(stack, self.address)
        self.http.headers["User-Agent"] = user_agent
        app, login_page = start(stack, self.http)
        code = app.code_from(post_password(stack, self.http, login_page, email, password))
        tokens = app.exchange(code)
        assert tokens.status_code == 200, tokens.text
        self.tokens = tokens.json()

    def page(self, query=""):
        response = self.http.get(self.stack.issuer + "/account" + query)
        assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
        return response.text

    def form_token(self):
        return re.search(r'data-csrf="([^"]+)"', self.page()).group(1)

    def post(self, path, csrf=None, headers=SAME_ORIGIN, **fields):
        return self.http.post(self.stack.issuer + path, allow_redirects=False, headers=headers,
                              data={"csrf": csrf or self.form_token(), **fields})

    def refreshes(self):
        """Whether the app's refresh token still works (rotating it)."""
        response = self.stack.session().post(self.stack.issuer + "/token", data={
            "grant_type": "refresh_token", "client_id": "mobile-app-001", "refresh_token": self.tokens["refresh_token"]})
        if response.status_code == 200:
            self.tokens["refresh_token"] = response.json()["refresh_token"]
            return True
        assert response.status_code == 400 and response.json()["error"] == "invalid_grant", response.text
        return False


def sessions(page):
    """Each listed session: its sid and its row's text."""
    rows = re.findall(r'<li class="session[^"]*">(.*?)</li>', page, re.S)
    return [(re.search(r'name="sid" value="([^"]+)"', row).group(1), html.unescape(re.sub(r"<[^>]+>", " ", row))) for row in rows]


def sid_of(stack, browser):
    return stack.query("SELECT sid FROM sso_sessions WHERE user_agent = ? AND created_ip = ? AND ended_at IS NULL",
                       browser.http.headers["User-Agent"], browser.address)[0][0]


def signed_out(page):
    """/account sends a signed-out browser to sign in: the login page for the account page's client."""
    return 'id="account-sign-in"' in page


def audit_events(stack, email):
    with open(os.path.join(stack.home, "log", "audit.log"), encoding="utf-8") as handle:
        return [event for event in map(json.loads, handle) if event.get("user") == email]


def test_both_sign_ins_are_listed_and_ending_the_other_ends_its_refresh_token(stack):
    email, password, _ = new_user(stack)
    laptop = Browser(stack, email, password, FIREFOX)
    phone = Browser(stack, email, password, IPHONE)
    laptop_sid, phone_sid = sid_of(stack, laptop), sid_of(stack, phone)

    listed = sessions(laptop.page())
    assert [sid for sid, _ in listed] == [laptop_sid, phone_sid], "this browser first"
    (_, here), (_, there) = listed
    assert "Firefox on Linux" in here and "this browser" in here and laptop.address in here
    assert "Safari on iPhone" in there and "this browser" not in there and phone.address in there
    for text in (here, there):
        assert "Apps: Demo Mobile App 1" in text and "password" in text, "the app by its display name"
    assert [sid for sid, _ in sessions(phone.page())] == [phone_sid, laptop_sid]
    assert stack.query("SELECT user_agent, created_ip FROM sso_sessions WHERE sid = ?", phone_sid) == [(IPHONE, phone.address)]

    ended = laptop.post("/account/sessions/end", sid=phone_sid)
    assert ended.status_code == 303 and ended.headers["Location"] == "/account?done=session_ended", ended.text
    assert not phone.refreshes(), "the ended session's refresh token is refused"
    assert signed_out(phone.page())
    assert laptop.refreshes(), "this browser's session goes on"
    page = laptop.page("?done=session_ended")
    assert "The session was signed out" in page and [sid for sid, _ in sessions(page)] == [laptop_sid]
    [event] = [event for event in audit_events(stack, email) if event["event"] == "session_ended"]
    assert event["sid"] == laptop_sid and event["target"] == "session " + phone_sid and event["ip"] == laptop.address

    # Another user's session is not this user's to end.
    other_email, other_password, _ = new_user(stack)
    other = Browser(stack, other_email, other_password, "Other/1.0")
    refused = laptop.post("/account/sessions/end", sid=sid_of(stack, other))
    assert refused.status_code == 303 and refused.headers["Location"] == "/account?done=session_not_found"
    assert other.refreshes() and not signed_out(other.page())


def test_sign_out_everywhere_ends_every_sign_in_and_its_tokens(stack):
    email, password, _ = new_user(stack)
    laptop = Browser(stack, email, password, FIREFOX)
    phone = Browser(stack, email, password, IPHONE)
    other_email, other_password, _ = new_user(stack)
    other = Browser(stack, other_email, other_password, FIREFOX)

    response = laptop.post("/account/sessions/end-all")
    assert response.status_code == 303 and response.headers["Location"] == "/account", response.text
    assert "sso_session" not in laptop.http.cookies, "the browser forgets its ended session"
    assert not laptop.refreshes() and not phone.refreshes()
    assert signed_out(laptop.page()) and signed_out(phone.page())
    user_id = stack.query("SELECT id FROM users WHERE email = ?", email)[0][0]
    assert stack.query("SELECT count(*) FROM sso_sessions WHERE user_id = ? AND ended_at IS NULL", user_id) == [(0,)]
    assert stack.query("SELECT count(*) FROM refresh_tokens WHERE user_id = ? AND revoked_at IS NULL", user_id) == [(0,)]
    assert other.refreshes() and not signed_out(other.page()), "another user's sign-in goes on"
    [event] = [event for event in audit_events(stack, email) if event["event"] == "signed_out_everywhere"]
    assert event["target"] == "2 sessions"


def test_a_cross_site_or_tokenless_post_changes_nothing(stack):
    email, password, _ = new_user(stack)
    laptop = Browser(stack, email, password, FIREFOX)
    phone = Browser(stack, email, password, IPHONE)
    phone_sid = sid_of(stack, phone)
    token = laptop.form_token()
    before = stack.database_dump()
    for path in ("/account/sessions/end", "/account/sessions/end-all"):
        assert laptop.post(path, csrf=token, sid=phone_sid, headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
        assert laptop.post(path, csrf=token, sid=phone_sid, headers={"Origin": "https://evil.example"}).status_code == 403
        assert laptop.post(path, csrf="not-the-token", sid=phone_sid).status_code == 403
        assert laptop.post(path, csrf=phone.form_token(), sid=phone_sid).status_code == 403
        assert laptop.http.get(stack.issuer + path, allow_redirects=False).status_code == 405
        signed_out_post = stack.session().post(stack.issuer + path, data={"csrf": token, "sid": phone_sid}, headers=SAME_ORIGIN)
        assert signed_out_post.status_code == 401
    assert stack.database_dump() == before
    assert len(sessions(laptop.page())) == 2 and phone.refreshes()
