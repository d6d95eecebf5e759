"""`/account` signs a browser in by itself (Keycloak's account console is
the model): the account page's own client, `gatehouse-account`, created by
`ssoctl setup`, runs the ordinary authorization code flow with PKCE and
lands back on /account, signed in. Through the real stack: a fresh
Chromium, a cookie jar without a browser, and what `ssoctl client` lets an
administrator do with that client."""
import json
import re
from urllib.parse import parse_qs, urlsplit

from selenium.webdriver.common.by import By

from test_account_security import client, fresh_address, new_user
from test_browser import (browser, browser_home, csp_violations, screenshot, submit_credentials, tls_mode,  # noqa: F401
                          wait_for_element, wait_for_url)

ACCOUNT_CLIENT = "gatehouse-account"


def test_a_fresh_browser_opens_account_signs_in_and_lands_on_account_signed_in(stack, browser):
    email, password, _ = new_user(stack)
    driver = browser()
    driver.get(stack.issuer + "/account")
    wait_for_url(driver, stack.issuer + "/login.html?", "/account without a session")
    assert parse_qs(urlsplit(driver.current_url).query)["client_id"] == [ACCOUNT_CLIENT]
    assert wait_for_element(driver, By.ID, "account-sign-in").text == "Sign in to see and manage your Gatehouse account."
    submit_credentials(driver, email, password)
    wait_for_url(driver, stack.issuer + "/account", "back from the sign-in")
    assert wait_for_element(driver, By.ID, "account-email").text == email
    assert driver.current_url == stack.issuer + "/account"
    assert "gh_account" not in {cookie["name"] for cookie in driver.get_cookies()}, "the sign-in's cookie is gone"
    assert csp_violations(driver) == []
    # The session this made holds no app's tokens: the account page is no app of the session.
    assert "No apps" in driver.find_element(By.CSS_SELECTOR, ".session-this .session-apps").text


def test_the_account_sign_in_works_without_javascript(stack, browser):
    email, password, _ = new_user(stack)
    driver = browser(javascript=False)
    driver.get(stack.issuer + "/account")
    wait_for_url(driver, stack.issuer + "/login.html?", "/account without a session, no JavaScript")
    submit_credentials(driver, email, password)
    wait_for_url(driver, stack.issuer + "/account", "back from the sign-in without JavaScript")
    assert wait_for_element(driver, By.ID, "account-email").text == email


def test_the_flow_with_a_cookie_jar_and_its_refusals(stack):
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    start = http.get(stack.issuer + "/account", allow_redirects=False, timeout=10)
    assert start.status_code == 303
    request = parse_qs(urlsplit(start.headers["Location"]).query)
    assert urlsplit(start.headers["Location"]).path == "/authorize"
    assert request["client_id"] == [ACCOUNT_CLIENT] and request["redirect_uri"] == [stack.issuer + "/account/callback"]
    assert request["code_challenge_method"] == ["S256"] and request["scope"] == ["openid"] and request["state"]
    cookie = start.headers["Set-Cookie"]
    assert cookie.startswith("gh_account=") and "Path=/account/callback" in cookie and "HttpOnly" in cookie and "Secure" in cookie

    login_page = http.get(stack.issuer + start.headers["Location"], timeout=10)
    assert 'id="account-sign-in"' in login_page.text
    req = re.search(r'name="req" value="([^"]+)"', login_page.text).group(1)
    signed_in = http.post(stack.issuer + "/login", data={"req": req, "email": email, "password": password},
                          headers={"Origin": stack.issuer}, allow_redirects=False, timeout=10)
    callback = signed_in.headers["Location"]
    assert callback.startswith(stack.issuer + "/account/callback?code="), callback

    # Another browser (no gh_account cookie) cannot finish this sign-in.
    stranger = client(stack, fresh_address())
    refused = stranger.get(callback, allow_redirects=False, timeout=10)
    assert refused.status_code == 400 and 'id="sign-in"' in refused.text
    # This one can, once.
    done = http.get(callback, allow_redirects=False, timeout=10)
    assert done.status_code == 303 and done.headers["Location"] == "/account", done.text
    page = http.get(stack.issuer + "/account", allow_redirects=False, timeout=10)
    assert page.status_code == 200 and f'<span id="account-email">{email}</span>' in page.text
    assert http.get(callback, allow_redirects=False, timeout=10).status_code == 400, "a code is redeemed once"
    assert stack.query("SELECT count(*) FROM refresh_tokens WHERE client_id = ?", ACCOUNT_CLIENT)[0][0] == 0


def test_setup_made_the_account_client_and_ssoctl_may_only_rename_it(stack):
    [listed] = [c for c in json.loads(stack.ssoctl("client", "list", "--json").stdout) if c["client_id"] == ACCOUNT_CLIENT]
    assert listed["redirect_uris"] == [stack.issuer + "/account/callback"]
    assert listed["grant_types"] == ["authorization_code"] and listed["scopes"] == ["openid"] and listed["type"] == "public"
    before = stack.database_dump()
    for args in (["client", "delete", ACCOUNT_CLIENT],
                 ["client", "update", ACCOUNT_CLIENT, "--add-redirect-uri", "https://evil.example/cb"],
                 ["client", "update", ACCOUNT_CLIENT, "--add-grant", "refresh_token"],
                 ["client", "add", ACCOUNT_CLIENT, "--redirect-uri", "https://evil.example/cb"]):
        refused = stack.ssoctl(*args)
        assert refused.returncode == 1, args
        assert "gatehouse-account is the account page's own sign-in client" in refused.stderr, refused.stderr
    assert stack.database_dump() == before
    renamed = stack.ssoctl("client", "update", ACCOUNT_CLIENT, "--name", "Konto")
    assert renamed.returncode == 0, renamed.stderr
    assert stack.ssoctl("client", "update", ACCOUNT_CLIENT, "--name", "Account page").returncode == 0
