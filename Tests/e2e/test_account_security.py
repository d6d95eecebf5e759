"""Account security through the real stack (nginx, TLS, SQLite, ssoctl):
TOTP enrolment and the two-step sign-in with a cookie jar and no JavaScript,
the SQLite login throttle (per account, per address, under concurrency),
and `ssoctl sessions` / `user passwd` / `user disable` ending sessions.

Every test makes users of its own, never the demo user the other tests share.
The shared stack's nginx rate limits are high, so what locks here is the
issuer's own throttle. Each test talks from its own loopback address
(127.x.y.z: Linux routes all of 127/8 to lo and nginx sees that address as
$remote_addr), so the per-address count of one test never reaches another.
"""
import base64
import hashlib
import hmac
import itertools
import json
import random
import re
import secrets
import ssl
import struct
import time
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPSConnection
from urllib.parse import parse_qs, urlsplit

import pytest
from requests.adapters import HTTPAdapter

from oidc_flow import App, query

ACCOUNT_LIMIT = 5    # LoginThrottlePolicy.perAccount
ADDRESS_LIMIT = 20   # LoginThrottlePolicy.perAddress
_addresses = itertools.count(1)
_address_prefix = f"127.{random.randint(64, 250)}.{random.randint(1, 250)}"


# --- helpers ----------------------------------------------------------------------

class SourceAddressAdapter(HTTPAdapter):
    """Binds every connection to one local address before connecting."""

    def __init__(self, source, **kwargs):
        self.source = source
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


def fresh_address():
    return f"{_address_prefix}.{next(_addresses)}"


def client(stack, address):
    """A cookie jar that talks to the stack from `address`."""
    http = stack.session()
    http.mount("https://", SourceAddressAdapter(address))
    return http


def new_user(stack, totp=False):
    email = f"sec-{secrets.token_hex(5)}@example.com"
    password = "pw-" + secrets.token_urlsafe(12)
    added = stack.ssoctl("user", "add", email, "--name", "Security Test", "--password-stdin", input=password + "\n")
    assert added.returncode == 0, added.stderr
    secret = None
    if totp:
        enrolled = stack.ssoctl("user", "totp", email)
        assert enrolled.returncode == 0, enrolled.stderr
        secret = parse_qs(urlsplit(enrolled.stdout.strip()).query)["secret"][0]
    return email, password, secret


def totp(secret_base32, offset=0, now=None):
    """RFC 6238 with HMAC-SHA-1, 30 s, 6 digits, written out with hmac/hashlib."""
    key = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    return hotp(key, int((time.time() if now is None else now) // 30) + offset)


def hotp(key, counter, digits=6):
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[19] & 0x0F
    return str((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 10 ** digits).zfill(digits)


def rows(stack, sql, *parameters):
    return stack.query(sql, *parameters)


def start(stack, http):
    """/authorize without a session: the app and the login page's location."""
    app = App(stack, http)
    first = app.authorize()
    assert first.status_code == 303, first.text
    assert first.headers["Location"].startswith("/login.html?client_id=")
    return app, first.headers["Location"]


def post_password(stack, http, login_page, email, password):
    return http.post(stack.issuer + "/login", allow_redirects=False,
                     data={"req": query(login_page)["req"], "email": email, "password": password})


def post_code(stack, http, login_page, code):
    return http.post(stack.issuer + "/login", allow_redirects=False, data={"req": query(login_page)["req"], "otp": code})


def error_of(response):
    assert response.status_code == 303, response.text
    return query(response.headers["Location"]).get("error")


def code_page(login_page, error=None):
    return "/login-otp.html?req=" + query(login_page)["req"] + (f"&error={error}" if error else "")


def skips_login(stack, http):
    """Whether the jar's sso_session cookie alone gets a code from /authorize."""
    response = App(stack, http).authorize()
    assert response.status_code == 303
    return "code=" in response.headers["Location"]


def sign_in(stack, http, email, password):
    app, login_page = start(stack, http)
    return app, app.code_from(post_password(stack, http, login_page, email, password))


def test_the_python_totp_matches_rfc_6238():
    seed = base64.b32encode(b"12345678901234567890").decode().rstrip("=")
    assert [totp(seed, now=t) for t in (59, 1111111109, 1234567890, 2000000000)] == \
        ["287082", "081804", "005924", "279037"]


# --- TOTP ----------------------------------------------------------------------------

def test_totp_enrolment_prints_an_otpauth_uri_and_re_enrolment_replaces_it(stack):
    email, _, _ = new_user(stack)
    first = stack.ssoctl("user", "totp", email)
    assert first.returncode == 0, first.stderr
    uri = first.stdout.strip()
    match = re.fullmatch(r"otpauth://totp/Gatehouse:([^?]+)\?secret=([A-Z2-7]+)&issuer=Gatehouse&algorithm=SHA1&digits=6&period=30", uri)
    assert match, uri
    assert match.group(1) == email
    secret = match.group(2)
    assert "=" not in secret and len(secret) == 32  # 20 bytes, RFC 4648 §6 without padding
    assert len(base64.b32decode(secret)) == 20
    assert secret not in stack.database_dump(), "the seed is sealed, not stored in clear"
    second = stack.ssoctl("user", "totp", email).stdout.strip()
    assert parse_qs(urlsplit(second).query)["secret"][0] != secret
    user_id = rows(stack, "SELECT id FROM users WHERE email = ?", email)[0][0]
    assert rows(stack, "SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(1,)]
    assert rows(stack, "SELECT count(*) FROM totp_recovery_codes WHERE user_id = ?", user_id) == [(0,)], "codes only when asked for"

    # --recovery-codes: the URI, then ten codes, one per line, stored hashed.
    with_codes = stack.ssoctl("user", "totp", email, "--recovery-codes")
    assert with_codes.returncode == 0, with_codes.stderr
    lines = with_codes.stdout.strip().split("\n")
    assert lines[0].startswith("otpauth://totp/") and len(lines) == 11, lines
    assert all(re.fullmatch(r"[0-9a-hjkmnp-tv-z]{4}(-[0-9a-hjkmnp-tv-z]{4}){3}", line) for line in lines[1:]), lines
    stored = {bytes(row[0]) for row in rows(stack, "SELECT code_hash FROM totp_recovery_codes WHERE user_id = ?", user_id)}
    assert stored == {hashlib.sha256(line.replace("-", "").encode()).digest() for line in lines[1:]}
    both = stack.ssoctl("user", "totp", email, "--remove", "--recovery-codes")
    assert both.returncode == 1 and "exclude each other" in both.stderr


@pytest.mark.parametrize("args", [["user", "totp", "nobody@example.com"], ["user", "totp"],
                                  ["sessions", "revoke", "no-such-sid"], ["sessions", "revoke"],
                                  ["sessions", "list", "nobody@example.com"]])
def test_bad_account_security_commands_change_nothing(stack, args):
    before = stack.database_dump()
    result = stack.ssoctl(*args)
    assert result.returncode != 0
    assert result.stderr.startswith("ssoctl: error: ") or "Error:" in result.stderr
    assert stack.database_dump() == before


def test_every_new_command_has_help(stack):
    for command in (["user", "totp"], ["sessions"], ["sessions", "list"], ["sessions", "revoke"], ["user", "passwd"],
                    ["user", "disable"]):
        result = stack.ssoctl(*command, "--help")
        assert result.returncode == 0, command
        assert "USAGE" in result.stdout.upper(), command


def test_totp_sign_in_with_a_cookie_jar_and_no_javascript(stack):
    email, password, secret = new_user(stack, totp=True)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)

    # Step 1: the right password does not sign in yet.
    first = post_password(stack, http, login_page, email, password)
    assert first.status_code == 303
    assert first.headers["Location"] == code_page(login_page), "the same req travels on"
    assert "sso_session" not in http.cookies
    assert "gh_login" in http.cookies
    user_id = rows(stack, "SELECT id FROM users WHERE email = ?", email)[0][0]
    assert rows(stack, "SELECT count(*) FROM sso_sessions WHERE user_id = ?", user_id) == [(0,)]

    # The page nginx completes with SSI.
    page = http.get(stack.issuer + first.headers["Location"])
    assert page.status_code == 200
    assert f'name="req" value="{query(login_page)["req"]}"' in page.text
    otp_field = re.search(r"<input[^>]*name=\"otp\"[^>]*>", page.text).group(0)
    for attribute in ('inputmode="numeric"', 'autocomplete="one-time-code"', 'pattern="[0-9]{6}"', "required"):
        assert attribute in otp_field
    assert 'action="/login"' in page.text and "<!--#" not in page.text

    # Step 2: the code completes it, exactly like a password-only sign-in.
    used = totp(secret)
    done = post_code(stack, http, login_page, used)
    code = app.code_from(done)
    assert "sso_session" in http.cookies
    tokens = app.exchange(code)
    assert tokens.status_code == 200, tokens.text
    assert rows(stack, "SELECT amr FROM sso_sessions WHERE user_id = ?", user_id) == [("pwd otp",)]
    assert rows(stack, "SELECT DISTINCT amr FROM authorization_codes WHERE user_id = ?", user_id) == [("pwd otp",)]

    # The session cookie skips both steps next time.
    assert skips_login(stack, http)

    # A second browser: the same code again is refused (RFC 6238 §5.2) ...
    other = client(stack, fresh_address())
    again, again_page = start(stack, other)
    assert post_password(stack, other, again_page, email, password).headers["Location"] == code_page(again_page)
    replay = post_code(stack, other, again_page, used)  # the exact code, even if the step has moved on
    assert replay.headers["Location"] == code_page(again_page, "invalid_code")
    shown = other.get(stack.issuer + replay.headers["Location"]).text
    assert "That code is not right. Try the current one." in shown
    # ... and the next step's code (one step of drift allowed) signs in.
    assert again.code_from(post_code(stack, other, again_page, totp(secret, offset=1)))


def test_the_id_token_says_how_the_user_signed_in(stack):
    email, password, secret = new_user(stack, totp=True)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    post_password(stack, http, login_page, email, password)
    tokens = app.exchange(app.code_from(post_code(stack, http, login_page, totp(secret)))).json()
    payload = tokens["id_token"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["amr"] == ["pwd", "otp"] and claims["acr"] == "urn:gatehouse:mfa"
    plain_email, plain_password, _ = new_user(stack)
    plain = client(stack, fresh_address())
    plain_app, plain_code = sign_in(stack, plain, plain_email, plain_password)
    payload = plain_app.exchange(plain_code).json()["id_token"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["amr"] == ["pwd"] and claims["acr"] == "urn:gatehouse:pwd"


def test_wrong_codes_lock_the_account_like_wrong_passwords(stack):
    email, password, secret = new_user(stack, totp=True)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    post_password(stack, http, login_page, email, password)
    wrong = str((int(totp(secret)) + 500000) % 1000000).zfill(6)
    assert [error_of(post_code(stack, http, login_page, wrong)) for _ in range(ACCOUNT_LIMIT)] == ["invalid_code"] * ACCOUNT_LIMIT
    locked = post_code(stack, http, login_page, totp(secret))
    assert locked.headers["Location"] == code_page(login_page, "too_many_attempts") + "&retry_minutes=1"
    assert "Too many attempts. Try again in a minute." in http.get(stack.issuer + locked.headers["Location"]).text
    assert error_of(post_password(stack, http, login_page, email, password)) == "too_many_attempts"
    assert "sso_session" not in http.cookies


@pytest.mark.parametrize("error, message", [
    ("invalid_code", "That code is not right. Try the current one."),
    ("too_many_attempts", "Too many attempts. Try again later."),
    ("too_many_attempts&retry_minutes=1", "Too many attempts. Try again in a minute."),
    ("too_many_attempts&retry_minutes=42", "Too many attempts. Try again in 42 minutes."),
    ("expired", "This step timed out. Sign in again with your password."),
])
def test_the_code_page_announces_each_error(stack, http, error, message):
    page = http.get(f"{stack.issuer}/login-otp.html?req=abc&error={error}")
    assert page.status_code == 200
    assert re.search(r'role="alert"[^>]*>' + re.escape(message) + "<", page.text)
    has_form = 'name="otp"' in page.text
    assert has_form == (error != "expired")
    if error == "expired":
        assert 'href="/login.html?req=abc&amp;lang=en"' in page.text, "back to the password step of the same request, in its language"


def raw_get(stack, path):
    """GET with the path sent exactly as written (requests would percent-encode it)."""
    connection = HTTPSConnection("localhost", stack.base, context=ssl.create_default_context(cafile=stack.ca), timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_the_code_page_has_the_page_headers_and_escapes_its_query(stack, http):
    hostile = '"><script>alert(1)</script>'
    for error in ("expired", "invalid_code"):
        status, text = raw_get(stack, f"/login-otp.html?req={hostile}&error={error}")
        assert status == 200
        assert "<script>alert" not in text and "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in text
    page = http.get(stack.issuer + "/login-otp.html?req=abc")
    assert page.status_code == 200
    assert 'role="alert"' not in page.text
    assert "<!--#" not in page.text and "error occurred while processing" not in page.text
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["Referrer-Policy"] == "no-referrer"
    assert "no-store" in page.headers["Cache-Control"]
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page.text) and not re.search(r"\sstyle=", page.text)


# --- throttling ------------------------------------------------------------------------

def test_five_failures_lock_the_account_and_then_even_the_right_password_is_refused(stack):
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    errors = [error_of(post_password(stack, http, login_page, email, "wrong " + password)) for _ in range(ACCOUNT_LIMIT)]
    assert errors == ["invalid_credentials"] * ACCOUNT_LIMIT
    locked = post_password(stack, http, login_page, email.upper(), password)
    assert locked.headers["Location"] == login_page + "&error=too_many_attempts&retry_minutes=1&login_hint=" + email.upper()
    assert "sso_session" not in http.cookies
    assert "Too many attempts. Try again in a minute." in http.get(stack.issuer + locked.headers["Location"]).text
    # Another client address does not help: the lock is on the account.
    elsewhere = client(stack, fresh_address())
    _, other_page = start(stack, elsewhere)
    assert error_of(post_password(stack, elsewhere, other_page, email, password)) == "too_many_attempts"


def test_a_nul_byte_variant_of_a_locked_email_is_refused_and_signs_nobody_in(stack):
    """The outside review's high finding, through nginx: `alice@…%00anything`
    had a lock counter of its own, and SQLite (bound with length -1) found
    alice, so the right password signed in while the account was locked."""
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    for _ in range(ACCOUNT_LIMIT):
        post_password(stack, http, login_page, email, "wrong " + password)
    before = rows(stack, "SELECT key_hash, failures, locked_until FROM login_throttle ORDER BY key_hash")
    for suffix in ("%00anything", "%00", "%0A", "%C2%85"):
        body = f"req={query(login_page)['req']}&email={email.replace('@', '%40')}{suffix}&password={password}"
        refused = http.post(stack.issuer + "/login", data=body, allow_redirects=False,
                            headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert refused.status_code == 400, (suffix, refused.status_code, refused.text[:200])
        assert "control character" in refused.text
        assert "sso_session" not in http.cookies
    assert rows(stack, "SELECT key_hash, failures, locked_until FROM login_throttle ORDER BY key_hash") == before, \
        "no counter was made or moved"
    assert error_of(post_password(stack, http, login_page, email, password)) == "too_many_attempts"


def test_an_unknown_email_locks_the_same_way(stack):
    http = client(stack, fresh_address())
    _, login_page = start(stack, http)
    email = f"nobody-{secrets.token_hex(4)}@example.com"
    errors = [error_of(post_password(stack, http, login_page, email, "guess")) for _ in range(ACCOUNT_LIMIT + 1)]
    assert errors == ["invalid_credentials"] * ACCOUNT_LIMIT + ["too_many_attempts"]


def test_concurrent_wrong_passwords_get_only_five_checks_and_the_lock_holds(stack):
    email, password, _ = new_user(stack)
    address = fresh_address()
    attempts = 12
    browsers = [client(stack, address) for _ in range(attempts)]
    pages = [start(stack, browser)[1] for browser in browsers]

    def guess(index):
        return error_of(post_password(stack, browsers[index], pages[index], email, f"guess {index}"))

    with ThreadPoolExecutor(max_workers=attempts) as pool:
        errors = list(pool.map(guess, range(attempts)))
    assert errors.count("invalid_credentials") == ACCOUNT_LIMIT, errors
    assert errors.count("too_many_attempts") == attempts - ACCOUNT_LIMIT, errors
    assert error_of(post_password(stack, browsers[0], pages[0], email, password)) == "too_many_attempts"


def test_one_address_is_locked_after_twenty_failures_and_only_that_address(stack):
    address = fresh_address()
    http = client(stack, address)
    _, login_page = start(stack, http)
    # Password spraying: one guess each on many accounts, from one address.
    for index in range(ADDRESS_LIMIT):
        assert error_of(post_password(stack, http, login_page, f"spray-{secrets.token_hex(4)}@example.com", "guess")) == \
            "invalid_credentials", index
    email, password, _ = new_user(stack)
    assert error_of(post_password(stack, http, login_page, email, password)) == "too_many_attempts"
    elsewhere = client(stack, fresh_address())
    assert sign_in(stack, elsewhere, email, password)[1]


# --- sessions -------------------------------------------------------------------------

def sid_of(stack, email):
    listing = stack.ssoctl("sessions", "list", email)
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0].split()[:6] == ["SID", "USER", "AUTH_TIME", "CREATED", "EXPIRES", "STATE"]
    return [line.split() for line in lines[1:]]


def refresh_revoked(stack, sid):
    return rows(stack, "SELECT count(*), count(revoked_at) FROM refresh_tokens WHERE sid = ?", sid)[0]


def test_sessions_list_and_revoke(stack):
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    app, code = sign_in(stack, http, email, password)
    refresh = app.exchange(code).json()["refresh_token"]
    sessions = sid_of(stack, email)
    assert len(sessions) == 1
    sid, user, state = sessions[0][0], sessions[0][1], sessions[0][5]
    assert user == email and state == "active"
    assert sid in stack.ssoctl("sessions", "list").stdout

    revoked = stack.ssoctl("sessions", "revoke", sid)
    assert revoked.returncode == 0, revoked.stderr
    assert sid_of(stack, email)[0][5] == "ended"
    assert refresh_revoked(stack, sid) == (1, 1)
    assert not skips_login(stack, http), "the old sso_session cookie no longer skips the login page"
    refused = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refresh,
                                                       "client_id": app.client_id})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


def test_password_change_ends_the_sessions_of_that_user(stack):
    email, password, _ = new_user(stack)
    other_email, other_password, _ = new_user(stack)
    http = client(stack, fresh_address())
    app, code = sign_in(stack, http, email, password)
    app.exchange(code)
    bystander = client(stack, fresh_address())
    sign_in(stack, bystander, other_email, other_password)
    assert skips_login(stack, http)

    changed = stack.ssoctl("user", "passwd", email, "--password-stdin", input="a completely new password\n")
    assert changed.returncode == 0, changed.stderr
    assert not skips_login(stack, http), "the old sso_session cookie no longer skips the login page"
    sid = sid_of(stack, email)[0][0]
    assert sid_of(stack, email)[0][5] == "ended"
    count, revoked = refresh_revoked(stack, sid)
    assert count == revoked == 1
    assert skips_login(stack, bystander), "other users keep their sessions"

    fresh = client(stack, fresh_address())
    _, login_page = start(stack, fresh)
    assert error_of(post_password(stack, fresh, login_page, email, password)) == "invalid_credentials"
    assert sign_in(stack, fresh, email, "a completely new password")[1]


def test_disabling_ends_the_sessions_and_refuses_sign_in(stack):
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    sign_in(stack, http, email, password)
    assert stack.ssoctl("user", "disable", email).returncode == 0
    assert not skips_login(stack, http)
    assert sid_of(stack, email)[0][5] == "ended"
    _, login_page = start(stack, http)
    assert error_of(post_password(stack, http, login_page, email, password)) == "invalid_credentials"


# --- a real browser -----------------------------------------------------------------

from selenium.webdriver.common.by import By  # noqa: E402

from test_browser import (AuthorizationRequest, browser, browser_home, csp_violations, query_of,  # noqa: E402,F401
                          screenshot, submit_credentials, tls_mode, wait_for_element, wait_for_url)


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_chromium_signs_in_with_password_and_code(stack, http, browser, screenshot, javascript):
    email, password, secret = new_user(stack, totp=True)
    driver = browser(javascript=javascript)
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "/authorize without a session")
    wait_for_element(driver, By.ID, "email")
    submit_credentials(driver, email, password)

    wait_for_url(driver, stack.issuer + "/login-otp.html?req=", "the password step of a TOTP account")
    field = wait_for_element(driver, By.ID, "otp")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Enter your code"
    assert field.get_attribute("inputmode") == "numeric"
    assert field.get_attribute("autocomplete") == "one-time-code"
    assert field.get_attribute("pattern") == "[0-9]{6}"
    assert field.accessible_name == "Code"
    if javascript:
        screenshot(driver, "login-otp.png")
    field.send_keys(totp(secret))
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()

    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "the code step")
    response = query_of(driver.current_url)
    assert response.get("state") == request.state and response.get("iss") == stack.issuer
    assert csp_violations(driver) == []
    tokens = request.exchange(http, response["code"])
    assert tokens.status_code == 200, tokens.text
