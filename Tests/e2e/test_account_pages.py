"""The account page in a real headless Chromium at phone width: every
section fits 320 px without scrolling sideways, before and after "confirm
it's you" (which opens the changes, each without a password field), times
show in the browser's time zone, and the authenticator app's QR code,
rendered on the server, scans (zbarimg, Debian's zbar-tools) to the
otpauth URI of the secret the page spells out."""
import os
import subprocess

from selenium.webdriver.common.by import By

from test_account_security import new_user
from test_browser import browser, browser_home, csp_violations, screenshot, tls_mode, wait_for_element  # noqa: F401
from test_passkeys import confirm_identity, sign_in_with_password


def test_the_account_page_fits_a_phone_and_its_qr_code_scans(stack, browser, screenshot):
    email, password, _ = new_user(stack)
    driver = browser()
    sign_in_with_password(driver, stack, email, password)
    driver.set_window_size(320, 2400)
    driver.get(stack.issuer + "/account")
    for heading in ("Passkeys", "Sessions and devices", "Confirm it's you", "Two-step sign-in"):
        assert driver.find_element(By.XPATH, f'//h2[text()="{heading}"]')
    assert not driver.find_elements(By.XPATH, "//h2[text()='Delete your account']"), "the changes wait for the confirmation"
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 320
    # The sign-in time: written in UTC by the server, shown by the script in the browser's zone (not "UTC").
    shown = driver.find_element(By.CSS_SELECTOR, "#sessions time[datetime]")
    assert shown.get_attribute("datetime").endswith("Z") and "UTC" not in shown.text and shown.text.strip(), shown.text

    confirm_identity(driver, stack, password)
    for heading in ("Password", "Delete your account"):
        assert driver.find_element(By.XPATH, f'//h2[text()="{heading}"]')
    assert not driver.find_elements(By.CSS_SELECTOR, "input[name='current']"), "one confirmation, no password field per form"
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 320
    assert csp_violations(driver) == []
    screenshot(driver, "account.png")

    driver.find_element(By.CSS_SELECTOR, "form[action='/account/totp/start'] button").click()
    secret = wait_for_element(driver, By.ID, "totp-secret").text.replace(" ", "").replace("\n", "")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 320
    shot = screenshot(driver, "account-totp.png")
    scanned = subprocess.run(["zbarimg", "--quiet", "--raw", shot], capture_output=True, text=True, timeout=30)
    assert scanned.returncode == 0, scanned.stderr
    uri = scanned.stdout.strip()
    assert uri.startswith("otpauth://totp/Gatehouse:") and f"secret={secret}&" in uri, (uri, secret)
    assert csp_violations(driver) == []
