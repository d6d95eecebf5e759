"""Passkeys in a real headless Chromium with a WebAuthn virtual authenticator
(CTAP2, internal transport, resident keys, user verification), against a
real stack: register a passkey on /account, sign out, sign in with it and no
password, remove it, and fail to sign in with it afterwards. A passkey signs
in its own user only."""
import secrets

from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import Protocol, Transport, VirtualAuthenticatorOptions

from test_account_security import new_user
from test_browser import (AuthorizationRequest, browser, browser_home, csp_violations, jwt_claims, open_login_page,  # noqa: F401
                          query_of, screenshot, submit_credentials, tls_mode, wait_for_element, wait_for_url)


def with_authenticator(driver):
    """A platform authenticator that holds discoverable credentials and
    verifies its user (as a phone's screen lock would)."""
    options = VirtualAuthenticatorOptions(protocol=Protocol.CTAP2, transport=Transport.INTERNAL, has_resident_key=True,
                                          has_user_verification=True, is_user_verified=True, is_user_consenting=True)
    driver.add_virtual_authenticator(options)
    return driver


SAVE_PASSWORD = "If your browser offers to save your password, you can do that first."


def sign_in_with_password(driver, stack, email, password):
    request = AuthorizationRequest(stack, login_hint=None)
    open_login_page(driver, stack, request)
    submit_credentials(driver, email, password)
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "password sign-in")
    # A password was typed: the interstitial gives the password manager its chance.
    assert SAVE_PASSWORD in wait_for_element(driver, By.ID, "signed-in-lead").text


def confirm_identity(driver, stack, password):
    """"Confirm it's you" on /account: the window in which changes need no password."""
    driver.get(stack.issuer + "/account")
    wait_for_element(driver, By.ID, "confirm-current-password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form[action='/account/confirm'] button").click()
    wait_for_element(driver, By.ID, "confirmed-window")


def add_passkey(driver, stack, name, password):
    confirm_identity(driver, stack, password)
    wait_for_element(driver, By.ID, "add-passkey")
    driver.find_element(By.ID, "passkey-name").send_keys(name)
    driver.find_element(By.ID, "add-passkey").click()
    wait_for_element(driver, By.XPATH, f"//strong[@class='passkey-name' and text()='{name}']")


def sign_out(driver, stack):
    driver.get(stack.issuer + "/logout")
    wait_for_element(driver, By.ID, "confirm-logout").click()
    wait_for_element(driver, By.TAG_NAME, "h1")
    assert "sso_session" not in {cookie["name"] for cookie in driver.get_cookies()}


def sign_in_with_passkey(driver, stack):
    """The login page's passkey button; the authorization response's query."""
    request = AuthorizationRequest(stack, login_hint=None)
    open_login_page(driver, stack, request)
    wait_for_element(driver, By.ID, "passkey-sign-in").click()
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "passkey sign-in")
    response = query_of(driver.current_url)
    assert response["state"] == request.state and response["iss"] == stack.issuer
    return request, response


def test_register_sign_out_sign_in_without_a_password_remove_and_be_refused(stack, http, browser, screenshot):
    email, password, _ = new_user(stack)
    driver = with_authenticator(browser())
    sign_in_with_password(driver, stack, email, password)

    driver.get(stack.issuer + "/account")
    assert wait_for_element(driver, By.ID, "account-email").text == email
    assert driver.find_element(By.ID, "no-passkeys").text == "You have no passkeys yet."
    add_passkey(driver, stack, "Test phone", password)
    screenshot(driver, "account-passkey.png")
    [credential] = driver.get_credentials()
    assert credential.is_resident_credential
    assert "last used" not in driver.find_element(By.CLASS_NAME, "passkey").text
    assert csp_violations(driver) == []
    [row] = stack.query("SELECT name, sign_count FROM passkeys WHERE user_id = (SELECT id FROM users WHERE email = ?)", email)
    assert row[0] == "Test phone"

    sign_out(driver, stack)
    request, response = sign_in_with_passkey(driver, stack)
    # No password was typed: the interstitial says nothing of saving one.
    lead = wait_for_element(driver, By.ID, "signed-in-lead").text
    assert lead == "Go back to the app to continue." and "password" not in driver.find_element(By.TAG_NAME, "main").text
    tokens = request.exchange(http, response["code"])
    assert tokens.status_code == 200, tokens.text
    claims = jwt_claims(tokens.json()["id_token"])
    assert "mfa" in claims["amr"] and ({"hwk", "swk"} & set(claims["amr"])) and "pwd" not in claims["amr"], claims
    assert claims["acr"] == "urn:gatehouse:mfa"
    subject = stack.query("SELECT subject FROM users WHERE email = ?", email)[0][0]
    assert claims["sub"] == subject

    # "Confirm it's you" with the passkey instead of the password: the
    # window opens, and with it the forms that wait for it.
    driver.get(stack.issuer + "/account")
    assert not driver.find_elements(By.CSS_SELECTOR, "form[action='/account/password']")
    wait_for_element(driver, By.ID, "confirm-passkey").click()
    wait_for_url(driver, stack.issuer + "/account?done=confirmed", "confirming with the passkey")
    assert wait_for_element(driver, By.ID, "confirmed-window")
    assert driver.find_element(By.CSS_SELECTOR, "form[action='/account/password']")

    # The page now says when the passkey was last used; renaming and
    # removing it are plain forms.
    driver.get(stack.issuer + "/account")
    assert "last used" in wait_for_element(driver, By.CLASS_NAME, "passkey").text
    driver.find_element(By.CSS_SELECTOR, ".rename summary").click()
    field = wait_for_element(driver, By.CSS_SELECTOR, ".rename input[name=name]")
    field.clear()
    field.send_keys("Work laptop")
    driver.find_element(By.CSS_SELECTOR, ".rename button").click()
    # The page the form leads to, not the one still shown while it loads.
    wait_for_url(driver, stack.issuer + "/account?done=renamed", "renaming the passkey")
    assert wait_for_element(driver, By.CSS_SELECTOR, "p.notice").text == "The passkey was renamed."
    assert driver.find_element(By.CLASS_NAME, "passkey-name").text == "Work laptop"
    assert stack.query("SELECT name FROM passkeys WHERE user_id = (SELECT id FROM users WHERE email = ?)", email) == [("Work laptop",)]
    driver.find_element(By.CSS_SELECTOR, ".passkey form.inline button").click()
    wait_for_url(driver, stack.issuer + "/account?done=removed", "removing the passkey")
    assert wait_for_element(driver, By.CSS_SELECTOR, "p.notice").text == "The passkey was removed."
    assert driver.find_element(By.ID, "no-passkeys")
    assert stack.query("SELECT count(*) FROM passkeys WHERE user_id = (SELECT id FROM users WHERE email = ?)", email)[0][0] == 0

    # The authenticator still holds the key, but the issuer no longer knows it.
    sign_out(driver, stack)
    request = AuthorizationRequest(stack, login_hint=None)
    open_login_page(driver, stack, request)
    wait_for_element(driver, By.ID, "passkey-sign-in").click()
    error = wait_for_element(driver, By.ID, "passkey-error")
    assert error.text.startswith("That passkey could not sign you in")
    assert driver.current_url.startswith(stack.issuer + "/login.html?")
    assert "sso_session" not in {cookie["name"] for cookie in driver.get_cookies()}


def test_a_passkey_signs_in_its_own_user_only(stack, http, browser):
    first, first_password, _ = new_user(stack)
    second, second_password, _ = new_user(stack)
    first_browser, second_browser = with_authenticator(browser()), with_authenticator(browser())
    for driver, email, password in ((first_browser, first, first_password), (second_browser, second, second_password)):
        sign_in_with_password(driver, stack, email, password)
        add_passkey(driver, stack, "key of " + email, password)
        sign_out(driver, stack)
    for driver, email in ((first_browser, first), (second_browser, second)):
        request, response = sign_in_with_passkey(driver, stack)
        claims = jwt_claims(request.exchange(http, response["code"]).json()["id_token"])
        assert claims["sub"] == stack.query("SELECT subject FROM users WHERE email = ?", email)[0][0]


def test_passkey_endpoints_refuse_other_sites_and_unbound_challenges(stack, http):
    # Without the pending request's cookie and form token, no options.
    refused = http.post(stack.issuer + "/login/passkey/options", data={"req": secrets.token_urlsafe(16)}, allow_redirects=False)
    assert refused.status_code in (303, 403), refused.text
    cross_site = http.post(stack.issuer + "/account/passkeys/options", data={"csrf": "x"},
                           headers={"Sec-Fetch-Site": "cross-site"})
    assert cross_site.status_code == 403
    signed_out = http.post(stack.issuer + "/account/passkeys/options", data={"csrf": "x"},
                           headers={"Sec-Fetch-Site": "same-origin"})
    assert signed_out.status_code == 401 and signed_out.json()["error"] == "signed_out"
    page = http.get(stack.issuer + "/account")
    assert page.status_code == 200 and 'id="account-sign-in"' in page.text, "signed out: the account page's sign-in"
    assert page.headers["Cache-Control"] == "no-store"
