"""The sign-in pages in a real headless Chromium (Debian's chromium +
chromium-driver, driven by selenium), against a real stack with real TLS.

The browser trusts the stack's local CA through an NSS database in a
throwaway HOME (certutil from libnss3-tools); only when that cannot be set
up does it fall back to --ignore-certificate-errors, and says so.

Screenshots always go to a temporary folder; when GATEHOUSE_SCREENSHOTS
names a folder they are also written there (docs/screenshots/ holds a set).
"""
import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import warnings
from http.client import HTTPSConnection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from stack import DEMO_PASSWORD

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CLIENT_ID = "mobile-app-001"
DEMO_EMAIL = "alice@example.com"
SCOPE = "openid profile email offline_access api:serverA api:serverB"
WAIT_SECONDS = 20
PAGE_CSP_DIRECTIVES = ("default-src 'none'", "script-src 'self'", "style-src 'self'",
                       "frame-ancestors 'none'", "base-uri 'none'")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt_claims(token):
    """The payload of a compact JWS, unverified (the JWKS tests verify)."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class AuthorizationRequest:
    """One authorization request with a fresh PKCE pair, state and nonce."""

    def __init__(self, stack, redirect_uri=None, login_hint=DEMO_EMAIL):
        self.stack = stack
        self.redirect_uri = redirect_uri or stack.issuer + "/mobile/postlogin.html"
        self.verifier = b64url(secrets.token_bytes(48))  # 64 characters, RFC 7636 §4.1
        self.challenge = b64url(hashlib.sha256(self.verifier.encode("ascii")).digest())
        self.state = secrets.token_urlsafe(16)
        self.nonce = secrets.token_urlsafe(16)
        self.login_hint = login_hint

    @property
    def url(self):
        params = {"client_id": CLIENT_ID, "redirect_uri": self.redirect_uri, "response_type": "code",
                  "scope": SCOPE, "state": self.state, "nonce": self.nonce,
                  "code_challenge": self.challenge, "code_challenge_method": "S256"}
        if self.login_hint:
            params["login_hint"] = self.login_hint
        return self.stack.issuer + "/authorize?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote)

    def exchange(self, http, code):
        return http.post(self.stack.issuer + "/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri,
            "client_id": CLIENT_ID, "code_verifier": self.verifier}, timeout=10)


def query_of(url):
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query, keep_blank_values=True))


# --- browser set-up ------------------------------------------------------------

def nss_home_trusting(ca):
    """A throwaway HOME whose NSS database trusts `ca`: {"home", "trusted"},
    trusted False when certutil is missing or fails (the browser then
    ignores TLS errors). The caller removes the home."""
    home = tempfile.mkdtemp(prefix="gatehouse-chromium-")
    nssdb = os.path.join(home, ".pki", "nssdb")
    os.makedirs(nssdb)
    try:
        for command in (["certutil", "-d", f"sql:{nssdb}", "-N", "--empty-password"],
                        ["certutil", "-d", f"sql:{nssdb}", "-A", "-t", "C,,", "-n", "gatehouse", "-i", ca]):
            subprocess.run(command, check=True, capture_output=True, timeout=30)
        return {"home": home, "trusted": True}
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired) as error:
        warnings.warn(f"cannot add the stack CA to an NSS database ({error}); "
                      "Chromium runs with --ignore-certificate-errors")
        return {"home": home, "trusted": False}


@pytest.fixture(scope="session")
def browser_home(stack):
    """nss_home_trusting the module stack's CA, removed afterwards."""
    home = nss_home_trusting(stack.ca)
    yield home
    shutil.rmtree(home["home"], ignore_errors=True)


def start_chromium(browser_home, javascript=True, dark=False, ignore_certificate_errors=False, language="en-US"):
    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=420,900",
                 "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--lang=" + language,
                 "--password-store=basic",
                 "--user-data-dir=" + tempfile.mkdtemp(prefix="profile-", dir=browser_home["home"])):
        options.add_argument(flag)
    if ignore_certificate_errors:
        options.add_argument("--ignore-certificate-errors")
    if dark:
        options.add_argument("--force-dark-mode")
        options.add_argument("--blink-settings=preferredColorScheme=0")  # 0 = dark
    # The Accept-Language header the browser sends.
    prefs = {"intl.accept_languages": language}
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    options.add_experimental_option("prefs", prefs)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(CHROMEDRIVER, env=dict(os.environ, HOME=browser_home["home"]))
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture(scope="session")
def tls_mode(stack, browser_home):
    """How the browser trusts the stack: 'nss' when the CA in the NSS database
    is enough for Chromium to load an issuer page, else 'ignore-errors'."""
    if browser_home["trusted"]:
        driver = start_chromium(browser_home)
        try:
            driver.set_page_load_timeout(WAIT_SECONDS)
            driver.get(stack.issuer + "/")
            if driver.title == "Gatehouse":
                return "nss"
            warnings.warn(f"Chromium did not trust the NSS database (title {driver.title!r}); "
                          "falling back to --ignore-certificate-errors")
        finally:
            driver.quit()
    return "ignore-errors"


@pytest.fixture()
def browser(browser_home, tls_mode):
    """A factory of Chromium sessions, all quit when the test ends."""
    drivers = []

    def start(javascript=True, dark=False):
        driver = start_chromium(browser_home, javascript=javascript, dark=dark,
                                ignore_certificate_errors=(tls_mode != "nss"))
        drivers.append(driver)
        driver.set_page_load_timeout(WAIT_SECONDS)
        return driver

    yield start
    for driver in drivers:
        try:
            driver.quit()
        except WebDriverException:
            pass


@pytest.fixture(scope="session")
def screenshot():
    temporary = tempfile.mkdtemp(prefix="gatehouse-screenshots-")
    published = os.environ.get("GATEHOUSE_SCREENSHOTS")
    if published:
        os.makedirs(published, exist_ok=True)

    def save(driver, name):
        path = os.path.join(temporary, name)
        assert driver.save_screenshot(path), f"screenshot {name} failed"
        if published:
            shutil.copyfile(path, os.path.join(published, name))
        return path

    return save


def wait_for_url(driver, prefix, what):
    try:
        WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.current_url.startswith(prefix))
    except TimeoutException:
        pytest.fail(f"{what}: expected a URL starting with {prefix}, still at {driver.current_url}\n"
                    f"page: {driver.page_source[:2000]}")


def wait_for_element(driver, by, value):
    return WebDriverWait(driver, WAIT_SECONDS).until(EC.visibility_of_element_located((by, value)))


def open_login_page(driver, stack, request):
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "/authorize without a session")
    assert "req=" in driver.current_url
    wait_for_element(driver, By.ID, "email")


def submit_credentials(driver, email, password):
    email_field = driver.find_element(By.ID, "email")
    email_field.clear()
    email_field.send_keys(email)
    password_field = driver.find_element(By.ID, "password")
    password_field.clear()
    password_field.send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()


def csp_violations(driver):
    return [entry["message"] for entry in driver.get_log("browser")
            if "Content Security Policy" in entry["message"] or "Refused to" in entry["message"]]


def test_the_browser_trusts_the_local_ca_through_nss(tls_mode):
    if shutil.which("certutil") is None:
        pytest.skip("certutil (libnss3-tools) is missing: Chromium runs with --ignore-certificate-errors")
    assert tls_mode == "nss"


# --- the sign-in flow ------------------------------------------------------------

def test_sign_in_through_the_interstitial_returns_to_the_app_link_and_the_code_redeems(stack, http, browser,
                                                                                         screenshot):
    driver = browser()
    request = AuthorizationRequest(stack)
    open_login_page(driver, stack, request)
    assert driver.find_element(By.TAG_NAME, "h1").text == "Sign in"
    screenshot(driver, "login.png")

    submit_credentials(driver, DEMO_EMAIL, DEMO_PASSWORD)
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "POST /login with the right password")
    response = query_of(driver.current_url)
    assert response.get("code")
    assert response.get("state") == request.state
    assert response.get("iss") == stack.issuer
    assert "error" not in response
    heading = wait_for_element(driver, By.TAG_NAME, "h1")
    assert heading.text == "You are signed in"
    screenshot(driver, "postlogin.png")
    assert csp_violations(driver) == []

    button = driver.find_element(By.LINK_TEXT, "Return to the app")
    assert button.get_attribute("href").startswith(stack.app_links + "/callback?")
    button.click()
    wait_for_url(driver, stack.app_links + "/callback?", "Return to the app")
    forwarded = query_of(driver.current_url)
    assert forwarded == response  # the whole authorization response, unchanged
    assert forwarded["code"] == response["code"]
    assert forwarded["state"] == request.state
    assert forwarded["iss"] == stack.issuer
    wait_for_element(driver, By.TAG_NAME, "h1")  # the not-installed fallback page
    assert csp_violations(driver) == []

    tokens = request.exchange(http, forwarded["code"])
    assert tokens.status_code == 200, tokens.text
    body = tokens.json()
    assert body["token_type"].lower() == "bearer"
    assert body["access_token"] and body["id_token"]
    id_claims = jwt_claims(body["id_token"])
    assert id_claims["iss"] == stack.issuer
    assert id_claims["aud"] in (CLIENT_ID, [CLIENT_ID])
    assert id_claims["nonce"] == request.nonce


def test_a_wrong_password_keeps_an_address_with_a_plus_without_javascript(stack, browser):
    email = f"bob+{secrets.token_hex(3)}@example.com"
    driver = browser(javascript=False)
    open_login_page(driver, stack, AuthorizationRequest(stack, login_hint=None))
    submit_credentials(driver, email, "not the password")
    wait_for_element(driver, By.ID, "login-error")
    assert driver.find_element(By.ID, "email").get_attribute("value") == email


def test_the_login_page_names_the_app_by_its_display_name(stack, http, browser):
    driver = browser()
    open_login_page(driver, stack, AuthorizationRequest(stack, login_hint=None))
    assert driver.find_element(By.ID, "app-name").text == "Demo Mobile App 1"
    assert driver.find_element(By.CSS_SELECTOR, "p.lead").text == "Use your Gatehouse account to continue to Demo Mobile App 1."
    assert csp_violations(driver) == []
    # A name in the URL is never shown: only a registered client's, asked of the issuer.
    forged = http.get(stack.issuer + "/login.html", params={"req": "x", "client_id": "<b>Evil</b>", "app_name": "Evil"}, timeout=10)
    assert "Evil" not in forged.text and 'id="app-name"' not in forged.text
    unknown = http.get(stack.issuer + "/login.html", params={"req": "x", "client_id": "no-such-app"}, timeout=10)
    assert 'id="app-name"' not in unknown.text and "continue in the app" in unknown.text
    # The name lookup answers nginx's own subrequests only.
    assert http.get(stack.issuer + "/login/app-name", params={"client_id": "mobile-app-001"}, timeout=10).status_code == 404


def test_sign_in_works_with_javascript_disabled(stack, http, browser):
    driver = browser(javascript=False)
    request = AuthorizationRequest(stack)
    open_login_page(driver, stack, request)
    submit_credentials(driver, DEMO_EMAIL, DEMO_PASSWORD)
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "POST /login without JavaScript")
    response = query_of(driver.current_url)
    assert response.get("code")
    assert response.get("state") == request.state
    assert response.get("iss") == stack.issuer

    driver.find_element(By.LINK_TEXT, "Return to the app").click()
    wait_for_url(driver, stack.app_links + "/callback?", "Return to the app without JavaScript")
    assert query_of(driver.current_url) == response
    tokens = request.exchange(http, response["code"])
    assert tokens.status_code == 200, tokens.text


def test_a_wrong_password_shows_the_error_and_the_form_still_signs_in(stack, browser, screenshot):
    driver = browser()
    request = AuthorizationRequest(stack)
    open_login_page(driver, stack, request)
    submit_credentials(driver, DEMO_EMAIL, "not-" + DEMO_PASSWORD)

    alert = wait_for_element(driver, By.CSS_SELECTOR, "[role=alert]")
    assert alert.text == "Wrong email or password."
    url = driver.current_url
    assert url.startswith(stack.issuer + "/login.html?")
    assert query_of(url).get("error") == "invalid_credentials"
    assert "code" not in query_of(url)
    assert driver.find_element(By.ID, "password").get_attribute("value") == ""
    # The address typed stays in the form: only the password is typed again.
    assert driver.find_element(By.ID, "email").get_attribute("value") == DEMO_EMAIL
    screenshot(driver, "login-error.png")

    submit_credentials(driver, DEMO_EMAIL, DEMO_PASSWORD)
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "a second try with the right password")
    assert query_of(driver.current_url).get("state") == request.state
    assert query_of(driver.current_url).get("code")


class LoopbackCallback:
    """The app's loopback redirect listener (RFC 8252 §7.3) on a free port."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                received.append(self.path)
                body = b"<!doctype html><title>App callback</title><h1>Back in the app</h1>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/callback"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_sign_in_reaches_a_loopback_redirect_uri(stack, http, browser):
    """The login form's POST answers with a redirect to another origin (here the
    app's loopback listener; a custom scheme works the same way): Chromium
    checks the login page's CSP form-action against every hop of it."""
    callback = LoopbackCallback()
    try:
        driver = browser()
        request = AuthorizationRequest(stack, redirect_uri=callback.url)
        open_login_page(driver, stack, request)
        submit_credentials(driver, DEMO_EMAIL, DEMO_PASSWORD)
        try:
            wait_for_url(driver, callback.url + "?", "POST /login redirecting to a loopback redirect_uri")
        except BaseException:
            print("browser console:", driver.get_log("browser"))
            raise
        response = query_of(driver.current_url)
        assert response.get("state") == request.state and response.get("iss") == stack.issuer
        assert callback.received and callback.received[0].startswith("/callback?")
        tokens = request.exchange(http, response["code"])
        assert tokens.status_code == 200, tokens.text
    finally:
        callback.close()


def totp_now(secret_base32):
    """RFC 6238: HMAC-SHA-1, 30 s steps, 6 digits."""
    key = base64.b32decode(secret_base32 + "=" * (-len(secret_base32) % 8))
    mac = hmac.new(key, struct.pack(">Q", int(time.time() // 30)), hashlib.sha1).digest()
    offset = mac[19] & 0x0F
    return str((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 10 ** 6).zfill(6)


def test_sign_in_with_a_totp_second_step(stack, http, browser, screenshot):
    email = f"browser-{secrets.token_hex(5)}@example.com"
    password = "pw-" + secrets.token_urlsafe(12)
    added = stack.ssoctl("user", "add", email, "--name", "Browser Test", "--password-stdin", input=password + "\n")
    assert added.returncode == 0, added.stderr
    enrolled = stack.ssoctl("user", "totp", email)
    assert enrolled.returncode == 0, enrolled.stderr
    secret = query_of(enrolled.stdout.strip())["secret"]

    driver = browser(javascript=False)
    request = AuthorizationRequest(stack, login_hint=None)
    open_login_page(driver, stack, request)
    submit_credentials(driver, email, password)
    wait_for_url(driver, stack.issuer + "/login-otp.html?", "the right password of a TOTP account")
    code_field = wait_for_element(driver, By.ID, "otp")
    assert code_field.accessible_name == "Code"
    assert code_field.get_attribute("autocomplete") == "one-time-code"
    screenshot(driver, "login-otp.png")

    code_field.send_keys(totp_now(secret))
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "the TOTP code")
    response = query_of(driver.current_url)
    assert response.get("state") == request.state
    tokens = request.exchange(http, response["code"])
    assert tokens.status_code == 200, tokens.text


# --- the pages themselves (no issuer logic needed) -------------------------------

def test_the_login_page_has_labelled_fields_no_inline_script_and_no_csp_violation(stack, browser):
    driver = browser()
    driver.get(stack.issuer + "/login.html?req=abc")
    wait_for_element(driver, By.ID, "email")
    source = driver.page_source
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", source, re.IGNORECASE), "inline <script>"
    assert not re.search(r"<style\b", source, re.IGNORECASE), "inline <style>"
    assert not re.search(r"\sstyle=", source, re.IGNORECASE), "style attribute"
    assert not re.search(r"\son[a-z]+=", source, re.IGNORECASE), "inline event handler"

    form = driver.find_element(By.CSS_SELECTOR, "form.login")
    assert form.get_attribute("method") == "post"
    assert form.get_attribute("action") == stack.issuer + "/login"
    assert driver.find_element(By.CSS_SELECTOR, "input[type=hidden][name=req]").get_attribute("value") == "abc"
    expected = {"email": ("email", "username", "Email"), "password": ("password", "current-password", "Password")}
    for name, (kind, autocomplete, label) in expected.items():
        field = driver.find_element(By.NAME, name)
        assert field.get_attribute("type") == kind
        assert field.get_attribute("autocomplete") == autocomplete
        assert field.get_attribute("required") is not None
        assert driver.find_element(By.CSS_SELECTOR, f"label[for='{field.get_attribute('id')}']").text == label
        assert field.accessible_name == label
    button = driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]")
    assert button.text == "Sign in"
    assert driver.find_elements(By.CSS_SELECTOR, "[role=alert]") == []
    assert csp_violations(driver) == []


@pytest.mark.parametrize("error, message", [
    ("invalid_credentials", "Wrong email or password."),
    ("too_many_attempts&retry_minutes=1", "Too many attempts. Try again in a minute."),
    ("too_many_attempts&retry_minutes=60", "Too many attempts. Try again in 60 minutes."),
    # Only the numbers the lock can have are shown; anything else reads "later".
    ("too_many_attempts&retry_minutes=61", "Too many attempts. Try again later."),
    ("too_many_attempts&retry_minutes=%3Cb%3E", "Too many attempts. Try again later."),
    ("expired", "This sign-in request expired. Go back to the app and start again."),
])
def test_each_login_error_is_announced(stack, browser, error, message):
    driver = browser(javascript=False)
    driver.get(f"{stack.issuer}/login.html?req=abc&error={error}")
    assert wait_for_element(driver, By.CSS_SELECTOR, "[role=alert]").text == message
    # An expired request cannot be completed here: no form to post.
    assert bool(driver.find_elements(By.CSS_SELECTOR, "form.login")) == (error != "expired")


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_the_login_hint_prefills_the_email(stack, browser, javascript):
    driver = browser(javascript=javascript)
    # A plain address: nginx's SSI fills it in, with or without JavaScript.
    driver.get(stack.issuer + "/login.html?req=abc&login_hint=alice%40example.com")
    assert wait_for_element(driver, By.ID, "email").get_attribute("value") == "alice@example.com"
    # One SSI leaves alone ("+"): only login.js decodes it.
    driver.get(stack.issuer + "/login.html?req=abc&login_hint=alice%2Bwork%40example.com")
    email = wait_for_element(driver, By.ID, "email")
    expected = "alice+work@example.com" if javascript else ""
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: email.get_attribute("value") == expected)


def test_the_interstitial_forwards_an_error_response_too(stack, browser):
    driver = browser(javascript=False)
    query = "error=access_denied&state=s%2B1&iss=" + urllib.parse.quote(stack.issuer, safe="")
    driver.get(f"{stack.issuer}/mobile/postlogin.html?{query}")
    assert wait_for_element(driver, By.TAG_NAME, "h1").text == "Sign-in did not complete"
    driver.find_element(By.LINK_TEXT, "Return to the app").click()
    wait_for_url(driver, stack.app_links + "/callback?", "Return to the app after an error")
    assert urllib.parse.urlsplit(driver.current_url).query == query


def test_the_post_logout_page_returns_to_the_app(stack, browser, screenshot):
    driver = browser()
    driver.get(stack.issuer + "/mobile/postlogout.html?state=xyz")
    assert wait_for_element(driver, By.TAG_NAME, "h1").text == "You are signed out"
    screenshot(driver, "postlogout.png")
    assert csp_violations(driver) == []
    driver.find_element(By.LINK_TEXT, "Return to the app").click()
    wait_for_url(driver, stack.app_links + "/logout-callback?", "Return to the app after logout")
    assert query_of(driver.current_url) == {"state": "xyz"}
    assert wait_for_element(driver, By.TAG_NAME, "h1").text == "You are signed out"
    assert csp_violations(driver) == []


def test_dark_mode_renders(stack, browser, screenshot):
    driver = browser(dark=True)
    driver.get(stack.issuer + "/login.html?req=abc&error=invalid_credentials")
    wait_for_element(driver, By.ID, "email")
    assert driver.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches") is True
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(part) for part in re.findall(r"\d+", background)[:3])
    assert red + green + blue < 150, background
    screenshot(driver, "login-dark.png")


# --- headers and escaping (requests) -----------------------------------------------

@pytest.mark.parametrize("path", ["/login.html?req=abc", "/mobile/postlogin.html?code=c&state=s",
                                  "/mobile/postlogout.html?state=s", "/css/gatehouse.css", "/js/login.js"])
def test_issuer_pages_carry_the_security_headers(stack, http, path):
    response = http.get(stack.issuer + path, timeout=10)
    assert response.status_code == 200
    csp = response.headers["Content-Security-Policy"]
    for directive in PAGE_CSP_DIRECTIVES:
        assert directive in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    if path.endswith(".html") or ".html?" in path:
        assert response.headers["Content-Type"].startswith("text/html")
        assert "no-store" in response.headers["Cache-Control"]
        assert "<!--#" not in response.text, "an SSI directive was left unprocessed"
        assert "error occurred while processing" not in response.text


@pytest.mark.parametrize("path", ["/callback?code=c&state=s", "/logout-callback?state=s", "/css/applinks.css"])
def test_app_link_fallback_pages_need_no_script(stack, http, path):
    response = http.get(stack.app_links + path, timeout=10)
    assert response.status_code == 200
    csp = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp and "script-src" not in csp
    assert response.headers["Referrer-Policy"] == "no-referrer"
    if not path.endswith(".css"):
        assert "<script" not in response.text.lower()
        assert "code=c" not in response.text  # nothing from the query is echoed


def raw_get(stack, path):
    """GET with the path sent exactly as written (requests would percent-encode
    the quotes and angle brackets this test needs to reach nginx raw)."""
    context = ssl.create_default_context(cafile=stack.ca)
    connection = HTTPSConnection("localhost", stack.base, context=context, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def test_query_values_are_html_escaped_by_the_pages(stack):
    hostile = '"><script>alert(1)</script>'
    status, login = raw_get(stack, f"/login.html?req={hostile}&error=x{hostile}&login_hint=a@b.c{hostile}")
    assert status == 200
    assert "<script>alert" not in login
    assert 'name="req" value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in login
    status, postlogin = raw_get(stack, f"/mobile/postlogin.html?code={hostile}&state=s")
    assert status == 200
    assert "<script>alert" not in postlogin
    href = re.search(r'id="return-to-app" href="([^"]*)"', postlogin).group(1)
    assert href == stack.app_links + "/callback?code=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;state=s"
    status, postlogout = raw_get(stack, f"/mobile/postlogout.html?state={hostile}")
    assert "<script>alert" not in postlogout
