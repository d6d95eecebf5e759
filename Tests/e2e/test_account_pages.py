"""The account page in a real headless Chromium at phone width: every
section fits 320 px without scrolling sideways, and the authenticator
app's QR code, rendered on the server, scans (zbarimg, Debian's
zbar-tools) to the otpauth URI of the secret the page spells out."""
import os
import subprocess

from selenium.webdriver.common.by import By

from test_account_security import new_user
from test_browser import browser, browser_home, csp_violations, screenshot, tls_mode, wait_for_element  # noqa: F401
from test_passkeys import sign_in_with_password


def test_the_account_page_fits_a_phone_and_its_qr_code_scans(stack, browser, screenshot):
    email, password, _ = new_user(stack)
    driver = browser()
    sign_in_with_password(driver, stack, email, password)
    driver.set_window_size(320, 2400)
    driver.get(stack.issuer + "/account")
    for heading in ("Passkeys", "Sessions and devices", "Password", "Two-step sign-in"):
        assert driver.find_element(By.XPATH, f"//h2[text()='{heading}']")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 320
    assert csp_violations(driver) == []
    screenshot(driver, "account.png")

    driver.find_element(By.ID, "totp-start-password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form[action='/account/totp/start'] button").click()
    secret = wait_for_element(driver, By.ID, "totp-secret").text.replace(" ", "").replace("\n", "")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 320
    shot = screenshot(driver, "account-totp.png")
    scanned = subprocess.run(["zbarimg", "--quiet", "--raw", shot], capture_output=True, text=True, timeout=30)
    assert scanned.returncode == 0, scanned.stderr
    uri = scanned.stdout.strip()
    assert uri.startswith("otpauth://totp/Gatehouse:") and f"secret={secret}&" in uri, (uri, secret)
    assert csp_violations(driver) == []
