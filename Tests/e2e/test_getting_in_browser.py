"""Two getting-in journeys in a real headless Chromium (test_browser.py's
setup) against a stack with GATEHOUSE_SIGNUP=open whose mail goes through
the outbox and gatehouse-mailer to an SMTP server on loopback (aiosmtpd):
sign-up → the mailed link's one button → back in the app, signed in; and
forgot → reset → sign in with the new password. The links are opened in
the same browser, as a person's mail client would hand them to it."""
import secrets
import shutil

import pytest
from selenium.webdriver.common.by import By

from getting_in_mail import journeys, link  # noqa: F401 (a fixture)
from test_browser import (AuthorizationRequest, jwt_claims, nss_home_trusting, query_of, start_chromium, wait_for_element,
                          wait_for_url)


@pytest.fixture(scope="module")
def chromium(journeys):
    """A factory of Chromium sessions that trust the module stack's CA (an
    NSS database in a throwaway HOME), else ignore certificate errors."""
    stack, _ = journeys
    home = nss_home_trusting(stack.ca)
    drivers = []

    def start(javascript=True):
        driver = start_chromium(home, javascript=javascript, ignore_certificate_errors=not home["trusted"])
        driver.set_page_load_timeout(20)
        drivers.append(driver)
        return driver

    yield start
    for driver in drivers:
        driver.quit()
    shutil.rmtree(home["home"], ignore_errors=True)


@pytest.mark.parametrize("javascript", [True, False])
def test_sign_up_verify_and_sign_in_in_chromium(journeys, chromium, javascript):
    stack, inbox = journeys
    driver = chromium(javascript=javascript)
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "/authorize without a session")
    wait_for_element(driver, By.ID, "create-account").click()
    wait_for_url(driver, stack.issuer + "/login/signup?", "the sign-up page")
    email, password = f"chromium-{secrets.token_hex(4)}@example.com", "pw-" + secrets.token_urlsafe(12)
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "name").send_keys("Chris Chromium")
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for_element(driver, By.TAG_NAME, "h1")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Check your email"

    url = link(inbox.wait(email)[0][2], stack, "/login/verify")
    driver.get(url)
    buttons = driver.find_elements(By.TAG_NAME, "button")
    assert len(buttons) == 1 and buttons[0].text == "Confirm my address"
    buttons[0].click()
    # The sign-up began in this browser's sign-in: verifying continues it to the app.
    wait_for_url(driver, request.redirect_uri, "back to the app after verifying")
    code = query_of(driver.current_url)["code"]
    tokens = request.exchange(stack.session(), code).json()
    assert jwt_claims(tokens["id_token"])["email"] == email and jwt_claims(tokens["id_token"])["email_verified"] is True


def test_forgot_and_reset_in_chromium(journeys, chromium):
    stack, inbox = journeys
    email, old = f"chromium-reset-{secrets.token_hex(4)}@example.com", "pw-" + secrets.token_urlsafe(12)
    assert stack.ssoctl("user", "add", email, "--name", "Rita Reset", "--password-stdin", input=old + "\n").returncode == 0
    driver = chromium()
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "/authorize without a session")
    wait_for_element(driver, By.ID, "forgot-password").click()
    wait_for_url(driver, stack.issuer + "/login/forgot?", "the forgot page")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for_element(driver, By.TAG_NAME, "h1")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Check your email"

    driver.get(link(inbox.wait(email)[0][2], stack, "/login/reset"))
    new = "pw-" + secrets.token_urlsafe(12)
    wait_for_element(driver, By.ID, "password").send_keys(new)
    driver.find_element(By.ID, "confirm").send_keys(new)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_for_element(driver, By.CSS_SELECTOR, "p.lead")
    assert "Your password was changed" in driver.find_element(By.CSS_SELECTOR, "p.lead").text
    assert driver.get_cookie("sso_session") is None, "the reset signs nobody in"

    # The mail's link carries no sign-in: the app starts one again, and the new password works.
    assert "Go back to the app to sign in." in driver.page_source
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "the login page again")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(new)
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()
    wait_for_url(driver, request.redirect_uri, "signed in with the new password")
    assert "code" in query_of(driver.current_url)
