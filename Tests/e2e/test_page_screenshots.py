"""Every page a person meets, in a real headless Chromium at phone size, in
light and dark, in English and German: the page is in the browser's
language, fits the width without scrolling sideways, follows the colour
scheme, and raises no CSP violation. With GATEHOUSE_SCREENSHOTS set (as
Scripts/test --screenshots does) each one is saved as
`pages/<page>.<language>.<scheme>.png` there: docs/PAGES.md shows them.

This module runs a stack of its own with a tight sign-in rate (1 a minute
after a burst of 20), so the 429 page can be shown too; its Chromium skips
certificate checks, since the stack has a CA of its own.
"""
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import requests
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By

from getting_in_mail import journeys, link  # noqa: F401 (journeys: a fixture)
from stack import Stack
from test_account_security import new_user
from test_browser import AuthorizationRequest, csp_violations, start_chromium, wait_for_element, wait_for_url
from test_passkeys import confirm_identity

ROOT = Path(__file__).resolve().parents[2]
CATALOGUES = {language: json.loads((ROOT / "www" / "locales" / f"{language}.json").read_text()) for language in ("en", "de")}
PHONE_WIDTH = 390


@pytest.fixture(scope="module")
def limited():
    running = Stack(extra_env={"GATEHOUSE_LOGIN_RATE": "1r/m", "GATEHOUSE_SWEEP_INTERVAL": "86400"}).start()
    yield running
    running.remove()


@pytest.fixture(scope="module")
def drivers():
    home = {"home": tempfile.mkdtemp(prefix="gatehouse-chromium-"), "trusted": False}
    started = {}

    def start(language, scheme):
        if (language, scheme) not in started:
            driver = start_chromium(home, dark=(scheme == "dark"), ignore_certificate_errors=True, language=language)
            driver.set_page_load_timeout(20)
            driver.set_window_size(PHONE_WIDTH, 844)
            started[(language, scheme)] = driver
        return started[(language, scheme)]

    yield start
    for driver in started.values():
        try:
            driver.quit()
        except WebDriverException:
            pass
    shutil.rmtree(home["home"], ignore_errors=True)


def save(driver, name, language, scheme):
    published = os.environ.get("GATEHOUSE_SCREENSHOTS")
    folder = os.path.join(published, "pages") if published else tempfile.mkdtemp(prefix="gatehouse-pages-")
    os.makedirs(folder, exist_ok=True)
    # The whole page, not the first screenful: the window grows to its height.
    height, frame = driver.execute_script("return [Math.max(document.documentElement.scrollHeight, document.body.scrollHeight, 844),"
                                          " window.outerHeight - window.innerHeight]")
    driver.set_window_size(PHONE_WIDTH, min(height + frame, 3000))
    path = os.path.join(folder, f"{name}.{language}.{scheme}.png")
    assert driver.save_screenshot(path), path
    driver.set_window_size(PHONE_WIDTH, 844)


def check(driver, name, language, scheme, heading_key=None):
    """What every page must be: in the language asked for, with its heading,
    within the phone's width, in the colour scheme asked for, no CSP report."""
    wait_for_element(driver, By.TAG_NAME, "h1")
    assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == language, name
    if heading_key:
        expected = CATALOGUES[language][heading_key].replace("{brand}", "Gatehouse")
        assert driver.find_element(By.TAG_NAME, "h1").text == expected, name
    assert driver.execute_script("return document.documentElement.scrollWidth") <= PHONE_WIDTH, name
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(part) for part in background[background.index("(") + 1:background.index(")")].split(",")[:3])
    brightness = (red + green + blue) / 3
    assert (brightness < 60) if scheme == "dark" else (brightness > 200), (name, scheme, background)
    assert csp_violations(driver) == [], name
    save(driver, name, language, scheme)


def sign_in(driver, stack, email, password):
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "the login page")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()
    wait_for_url(driver, stack.issuer + "/mobile/postlogin.html?", "password sign-in")


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_in_every_language_and_scheme(limited, drivers, language, scheme):
    stack = limited
    driver = drivers(language, scheme)
    email, password, _ = new_user(stack)

    # The sign-in: the login page, a wrong password, the code step.
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "the login page")
    check(driver, "login", language, scheme, "login.title")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys("not the password")
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()
    wait_for_url(driver, stack.issuer + "/login.html?", "the wrong password")
    wait_for_element(driver, By.ID, "login-error")
    check(driver, "login-error", language, scheme, "login.title")
    driver.get(stack.issuer + "/login-otp.html?req=example")
    check(driver, "login-otp", language, scheme, "otp.title")

    # Signed in: the interstitial, the account page, then signing out.
    sign_in(driver, stack, email, password)
    check(driver, "postlogin", language, scheme, "postlogin.signed_in")
    driver.get(stack.issuer + "/mobile/postlogin.html?error=access_denied&state=s")
    check(driver, "postlogin-error", language, scheme, "postlogin.failed")
    driver.get(stack.issuer + "/account")
    wait_for_element(driver, By.ID, "account-email")
    check(driver, "account", language, scheme)
    driver.get(stack.issuer + "/logout?client_id=mobile-app-001")
    wait_for_element(driver, By.ID, "logout-app")
    check(driver, "logout-confirm-app", language, scheme)
    driver.get(stack.issuer + "/logout")
    wait_for_element(driver, By.ID, "confirm-logout")
    check(driver, "logout-confirm", language, scheme)
    driver.find_element(By.ID, "confirm-logout").click()
    wait_for_element(driver, By.CSS_SELECTOR, ".status-ok")
    check(driver, "logout-done", language, scheme)
    # Signed out, /account leads to the sign-in for the account page.
    driver.get(stack.issuer + "/account")
    wait_for_element(driver, By.ID, "account-sign-in")
    check(driver, "account-sign-in", language, scheme, "login.title")
    driver.get(stack.issuer + "/account/callback")
    wait_for_element(driver, By.ID, "sign-in")
    check(driver, "account-sign-in-failed", language, scheme, "account.title")
    driver.get(stack.issuer + "/mobile/postlogout.html?state=s")
    check(driver, "postlogout", language, scheme, "postlogout.heading")

    # The pages nobody hopes to see.
    driver.get(stack.issuer + "/authorize?client_id=no-such-app")
    check(driver, "authorize-error", language, scheme)
    driver.get(stack.issuer + "/no-such-page")
    check(driver, "not-found", language, scheme, "error404.title")
    driver.get(stack.issuer + "/")
    check(driver, "index", language, scheme, "index.title")
    driver.get(stack.app_links + "/callback?code=example&state=s")
    wait_for_element(driver, By.TAG_NAME, "h1")
    assert driver.find_element(By.TAG_NAME, "h1").text == CATALOGUES[language]["applinks.callback_heading"]
    save(driver, "applinks-callback", language, scheme)
    driver.get(stack.app_links + "/no-such-page")
    wait_for_element(driver, By.TAG_NAME, "h1")
    assert driver.find_element(By.TAG_NAME, "h1").text == CATALOGUES[language]["error404.title"]
    assert csp_violations(driver) == []
    save(driver, "applinks-not-found", language, scheme)


@pytest.mark.parametrize("language", ["en", "de"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_getting_in_pages_in_every_language_and_scheme(journeys, drivers, language, scheme):
    """Sign-up, its mail's page, "forgot your password", the reset link's
    form, and changing the address on /account: on a stack of their own
    with sign-up open and a real SMTP server (getting_in_mail.py)."""
    stack, inbox = journeys
    driver = drivers(language, scheme)
    driver.get(stack.issuer + "/")
    driver.delete_all_cookies()  # the other stack's, on the same host

    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "the login page")
    driver.find_element(By.ID, "create-account").click()
    wait_for_element(driver, By.ID, "name")
    check(driver, "signup", language, scheme, "signup.title")
    email, password = f"pages-{language}-{scheme}@example.com", "a page-shot password 1"
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "name").send_keys("Zoë Müller")
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait_for_element(driver, By.CSS_SELECTOR, "p[role=status]")
    check(driver, "check-email", language, scheme, "getting_in.check_email_title")
    driver.get(link(inbox.wait(email)[0][2], stack, "/login/verify"))
    check(driver, "verify", language, scheme, "verify.title")

    driver.get(stack.issuer + "/login/forgot")
    check(driver, "forgot", language, scheme, "forgot.title")
    known, known_password, _ = new_user(stack)
    driver.find_element(By.ID, "email").send_keys(known)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait_for_element(driver, By.CSS_SELECTOR, "p[role=status]")
    driver.get(link(inbox.wait(known)[0][2], stack, "/login/reset"))
    check(driver, "reset", language, scheme, "reset.title")

    # Changing the address: the confirmed account page, the new address's
    # page with its one button, the old address's way back.
    sign_in(driver, stack, known, known_password)
    confirm_identity(driver, stack, known_password)
    wait_for_element(driver, By.ID, "new-email")
    check(driver, "account-confirmed", language, scheme, "account.title")
    moved = f"moved-{language}-{scheme}@example.com"
    driver.find_element(By.ID, "new-email").send_keys(moved)
    driver.find_element(By.ID, "change-email").click()
    wait_for_element(driver, By.CSS_SELECTOR, "p.notice")
    driver.get(link(inbox.wait(moved)[0][2], stack, "/login/email-change"))
    check(driver, "email-change", language, scheme, "email_change.title")
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    wait_for_element(driver, By.CSS_SELECTOR, "p[role=status]")
    check(driver, "email-change-done", language, scheme, "email_change.done_title")
    driver.get(link(inbox.wait(known, 2)[1][2], stack, "/login/email-revert"))
    check(driver, "email-revert", language, scheme, "email_revert.title")


def test_the_too_many_attempts_page_in_every_language_and_scheme(limited, drivers):
    """Last: it spends the sign-in bucket (20, then one a minute) for good."""
    http = limited.session()
    # "localhost" may reach nginx over IPv4 or IPv6, each its own bucket: spend both.
    for origin in (f"https://127.0.0.1:{limited.base}", f"https://[::1]:{limited.base}"):
        try:
            statuses = [http.post(origin + "/login", data={"req": "x"}, allow_redirects=False, timeout=10).status_code
                        for _ in range(30)]
        except requests.ConnectionError:
            assert "[::1]" in origin, "IPv4 must answer"
            continue
        assert 429 in statuses, (origin, statuses)
    for language in ("en", "de"):
        for scheme in ("light", "dark"):
            driver = drivers(language, scheme)
            driver.get(limited.issuer + "/account")
            check(driver, "too-many-attempts", language, scheme, "error429.title")
