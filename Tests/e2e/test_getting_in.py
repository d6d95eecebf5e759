"""Getting in on one's own, end to end with plain HTTP forms (no script):
sign-up → verify → the app's sign-in goes on; forgot → reset; invitations;
the refusals. Mail travels for real: the outbox, the supervised sender
(gatehouse-mailer) and an SMTP server (aiosmtpd) on loopback
(getting_in_mail.py). Chromium walks two of the journeys in
test_getting_in_browser.py."""
import email.header as email_header
import json
import os
import re
import secrets
import statistics
import time

import pytest
import requests

from getting_in_mail import (audit, fresh_address, html_part, journeys, link, new_user, strong_password, text_part,  # noqa: F401
                              token_of, user_entry)
from oidc_flow import App, query
from stack import DEMO_PASSWORD


def pending_sign_in(stack, http):
    """An app's authorization request: (app, the login page's req)."""
    app = App(stack, http)
    first = app.authorize()
    assert first.status_code == 303, first.text
    return app, query(first.headers["Location"])["req"]


def sign_up(stack, http, email, name="New Person", password=None, req=None, headers=None):
    data = {"email": email, "name": name, "password": password or strong_password(), "lang": "en"}
    if req:
        data["req"] = req
    return http.post(stack.issuer + "/login/signup", data=data, headers=headers or {}, allow_redirects=False)


def forgot(stack, http, email, headers=None):
    return http.post(stack.issuer + "/login/forgot", data={"email": email}, headers=headers or {}, allow_redirects=False)


def password_sign_in(stack, email, password):
    """A whole sign-in in a fresh browser: the /login answer."""
    http = stack.session()
    app = App(stack, http)
    location = app.authorize().headers["Location"]
    return app, app.login(location, email=email, password=password)


# --- sign-up and verification --------------------------------------------------------------------

def test_sign_up_verify_and_the_apps_sign_in_goes_on(journeys):
    stack, inbox = journeys
    http = stack.session()
    app, req = pending_sign_in(stack, http)
    login_page = http.get(stack.issuer + "/login.html", params={"client_id": app.client_id, "req": req}).text
    assert 'id="create-account" href="/login/signup?lang=en&amp;req=' + req in login_page, "open: the login page offers sign-up"
    assert 'id="forgot-password" href="/login/forgot?lang=en&amp;req=' + req in login_page
    assert "an error occurred" not in login_page
    form = http.get(stack.issuer + "/login/signup", params={"req": req, "lang": "en"})
    assert form.status_code == 200 and 'action="/login/signup"' in form.text and 'name="req" value="' + req in form.text

    email, password = fresh_address("signup"), strong_password()
    answered = sign_up(stack, http, email, "Zoë Müller", password, req=req)
    assert answered.status_code == 200 and "Check your email" in answered.text, answered.text
    assert user_entry(stack, email)["email_verified"] is False

    # Unverified: the right password gets a page that says so, with a button for a new link.
    _, refused = password_sign_in(stack, email, password)
    assert refused.status_code == 403 and "Confirm your email address first" in refused.text
    assert 'action="/login/verify/resend"' in refused.text and "sso_session" not in refused.headers.get("Set-Cookie", "")

    (mail_from, recipients, message, _), = inbox.wait(email)
    assert mail_from == "no-reply@localhost" and recipients == [email]
    assert message["Subject"] == "Confirm your email address"
    assert message["To"].addresses[0].display_name == "Zoë Müller" and message["To"].addresses[0].addr_spec == email
    assert message.get_body(preferencelist=("plain",)) is not None, "a text/plain part"
    url = link(message, stack, "/login/verify")
    assert "24 hours" in text_part(message) and "Zoë Müller" in html_part(message)

    # Opening the link (a mail scanner does) changes nothing: one button.
    opened = requests.get(url, verify=stack.ca, allow_redirects=False)
    assert opened.status_code == 200 and opened.text.count("<form") == 1 and opened.text.count("<button") == 1
    assert user_entry(stack, email)["email_verified"] is False
    assert token_of(url) not in json.dumps(audit(stack, "signup")), "no link in the audit log"

    # The button, in the browser that signed up: the app's sign-in goes on.
    pressed = http.post(stack.issuer + "/login/verify", data={"token": token_of(url), "req": req, "lang": "en"}, allow_redirects=False)
    assert pressed.status_code == 303 and pressed.headers["Location"].startswith("myapp:auth/callback?"), pressed.text
    tokens = app.exchange(app.code_from(pressed)).json()
    claims = json.loads(__import__("base64").urlsafe_b64decode(tokens["id_token"].split(".")[1] + "==="))
    assert claims["email"] == email and claims["email_verified"] is True
    userinfo = http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + tokens["access_token"]}).json()
    assert userinfo["email_verified"] is True
    assert user_entry(stack, email)["email_verified"] is True
    assert [event["user"] for event in audit(stack, "email_verified")].count(email) == 1

    # Single use: the same link again is refused with a clear page.
    again = requests.post(stack.issuer + "/login/verify", data={"token": token_of(url)}, verify=stack.ca, allow_redirects=False)
    assert again.status_code == 410 and "This link no longer works" in again.text
    # And now the password signs in.
    _, signed_in = password_sign_in(stack, email, password)
    assert signed_in.status_code == 303 and signed_in.headers["Location"].startswith("myapp:auth/callback?")


def test_prompt_create_opens_the_sign_up_page_of_the_apps_sign_in(journeys):
    """Initiating User Registration via OpenID Connect 1.0: prompt=create
    lands on the sign-up page, even with a session, and verifying in this
    browser completes the app's sign-in."""
    stack, inbox = journeys
    discovery = stack.session().get(stack.issuer + "/.well-known/openid-configuration").json()
    assert "create" in discovery["prompt_values_supported"]
    http = stack.session()
    app = App(stack, http)
    first = app.authorize(prompt="create")
    assert first.status_code == 303 and first.headers["Location"].startswith("/login/signup?req="), first.headers
    req = query(first.headers["Location"])["req"]
    form = http.get(stack.issuer + first.headers["Location"])
    assert form.status_code == 200 and 'action="/login/signup"' in form.text and f'name="req" value="{req}"' in form.text
    email, password = fresh_address("create"), strong_password()
    assert sign_up(stack, http, email, password=password, req=req).status_code == 200
    url = link(inbox.wait(email)[0][2], stack, "/login/verify")
    pressed = http.post(stack.issuer + "/login/verify", data={"token": token_of(url), "req": req}, allow_redirects=False)
    assert pressed.status_code == 303 and pressed.headers["Location"].startswith("myapp:auth/callback?"), pressed.text
    assert app.exchange(app.code_from(pressed)).status_code == 200
    # Signed in now, prompt=create still shows the sign-up page, never a silent code.
    again = app.authorize(prompt="create")
    assert again.status_code == 303 and again.headers["Location"].startswith("/login/signup?req=")
    both = app.authorize(prompt="none create")
    assert query(both.headers["Location"])["error"] == "invalid_request"


def test_a_new_link_on_request_voids_the_old_one_and_verifies_without_a_pending_sign_in(journeys):
    stack, inbox = journeys
    email, password = fresh_address("resend"), strong_password()
    assert sign_up(stack, stack.session(), email, password=password).status_code == 200
    first = link(inbox.wait(email)[0][2], stack, "/login/verify")
    resent = stack.session().post(stack.issuer + "/login/verify/resend", data={"email": email}, allow_redirects=False)
    assert resent.status_code == 200 and "Check your email" in resent.text
    second = link(inbox.wait(email, 2)[1][2], stack, "/login/verify")
    assert first != second
    assert requests.get(first, verify=stack.ca).status_code == 410, "a newer link voids the older"
    # Another browser than the one that signed up: the sign-up's password too.
    opened = requests.get(second, verify=stack.ca)
    assert opened.status_code == 200 and 'name="password"' in opened.text and "outside the browser you signed up in" in opened.text
    press = lambda **data: requests.post(stack.issuer + "/login/verify", data={"token": token_of(second), **data},  # noqa: E731
                                         verify=stack.ca, allow_redirects=False)
    missing = press()
    assert missing.status_code == 400 and "Enter the password you chose" in missing.text
    wrong = press(password="wrong-" + password)
    assert wrong.status_code == 400 and "That is not this sign-up" in wrong.text
    assert user_entry(stack, email)["email_verified"] is False, "refusals confirm nothing and keep the link"
    done = press(password=password)
    assert done.status_code == 200 and "Your email address is confirmed" in done.text
    assert user_entry(stack, email)["email_verified"] is True


def test_the_owners_sign_up_over_an_unverified_one_replaces_its_password(journeys):
    """Account pre-hijacking: someone signs up with another's address first;
    the owner's own sign-up, and the link it mails, must leave the owner's
    password in the account, never the first one's."""
    stack, inbox = journeys
    email, attackers, owners = fresh_address("prehijack"), strong_password(), strong_password()
    assert sign_up(stack, stack.session(), email, name="Attacker", password=attackers).status_code == 200
    inbox.wait(email)
    assert sign_up(stack, stack.session(), email, name="Owner", password=owners).status_code == 200
    latest = link(inbox.wait(email, 2)[1][2], stack, "/login/verify")
    done = requests.post(stack.issuer + "/login/verify", data={"token": token_of(latest), "password": owners}, verify=stack.ca,
                         allow_redirects=False)
    assert done.status_code == 200, done.text
    entry = user_entry(stack, email)
    assert entry["email_verified"] is True and entry["name"] == "Owner"
    _, refused = password_sign_in(stack, email, attackers)
    assert refused.status_code == 303 and "error=invalid_credentials" in refused.headers["Location"], refused.headers
    _, signed_in = password_sign_in(stack, email, owners)
    assert signed_in.status_code == 303 and "code=" in signed_in.headers["Location"], signed_in.headers


def test_the_owner_cannot_verify_someone_elses_sign_up_with_one_click(journeys):
    """The other half of pre-hijacking: the owner, who never signed up,
    opens the mail and presses the button; without the sign-up's password
    (which only the one who signed up knows) nothing is confirmed."""
    stack, inbox = journeys
    email, attackers = fresh_address("oneclick"), strong_password()
    assert sign_up(stack, stack.session(), email, name="Attacker", password=attackers).status_code == 200
    url = link(inbox.wait(email)[0][2], stack, "/login/verify")
    pressed = requests.post(stack.issuer + "/login/verify", data={"token": token_of(url)}, verify=stack.ca, allow_redirects=False)
    assert pressed.status_code == 400 and user_entry(stack, email)["email_verified"] is False
    _, refused = password_sign_in(stack, email, attackers)
    assert refused.status_code == 403, "the account still cannot sign in"


def test_a_sign_up_with_a_known_address_answers_the_same_and_mails_its_owner_a_notice(journeys):
    stack, inbox = journeys
    nobody = fresh_address("nobody")
    known = sign_up(stack, stack.session(), "ALICE@example.com")
    unknown = sign_up(stack, stack.session(), nobody)
    assert known.status_code == unknown.status_code == 200
    assert known.text.replace("ALICE@example.com", "ADDRESS") == unknown.text.replace(nobody, "ADDRESS")
    (_, _, notice, _), = inbox.wait("alice@example.com")
    assert notice["Subject"] == "Someone tried to create an account with your address"
    assert stack.issuer + "/login/forgot" in text_part(notice)
    assert [user["email"].lower() for user in json.loads(stack.ssoctl("user", "list", "--json").stdout)].count("alice@example.com") == 1
    # The demo account still signs in with its password, untouched.
    _, signed_in = password_sign_in(stack, "alice@example.com", DEMO_PASSWORD)
    assert signed_in.status_code == 303


def test_the_form_refuses_what_the_rules_refuse_and_writes_nothing(journeys):
    stack, inbox = journeys
    tried = []
    for email, name, password, says in [
        ("not-an-email", "N", strong_password(), "Enter a valid email address."),
        ("a@b", "N", strong_password(), "Enter a valid email address."),
        ("a b@example.com", "N", strong_password(), "Enter a valid email address."),
        ("<a@example.com>", "N", strong_password(), "Enter a valid email address."),
        ("x@example.com\r\nBcc: victim@example.org", "N", strong_password(), "Enter a valid email address."),
        (fresh_address(), "Evil\r\nBcc: victim@example.org", strong_password(), "Enter your name"),
        (fresh_address(), "Evil\nSubject: hi", strong_password(), "Enter your name"),
        (fresh_address(), "N", "short", "at least 8 characters"),
        (fresh_address(), "N", "baseball", "10,000 most common"),
    ]:
        tried.append(email)
        refused = sign_up(stack, stack.session(), email, name, password)
        assert refused.status_code == 400 and says in refused.text, (email, name, refused.text)
        assert user_entry(stack, email) is None
    mail = fresh_address("mail")
    tried.append(mail)
    refused = sign_up(stack, stack.session(), mail, "N", mail.upper())
    assert refused.status_code == 400 and "must not be your email address" in refused.text
    time.sleep(3)  # the sender looks every second: a queued message would be here by now
    assert not any(inbox.to(address) for address in tried + ["victim@example.org", "x@example.com"]), "nothing was mailed"


def test_header_injection_never_reaches_the_headers(journeys):
    stack, inbox = journeys
    # What the rules let through reaches the headers only as an encoded display name.
    email = fresh_address("hdr")
    name = 'Zoë "Q" <evil@example.org>, Bcc: victim@example.org'
    assert sign_up(stack, stack.session(), email, name).status_code == 200
    (_, recipients, message, raw), = inbox.wait(email)
    assert recipients == [email], "one envelope recipient"
    assert message["To"].addresses[0].addr_spec == email and len(message["To"].addresses) == 1
    # RFC 2047 §6.2: the space between adjacent encoded-words is not part of
    # the text (Python's address parser keeps it; email.header drops it).
    headers = raw.split(b"\r\n\r\n", 1)[0].decode("ascii")
    to_value = re.search(r"^To:([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)", headers, re.M).group(1).replace("\r\n", "")
    decoded = str(email_header.make_header(email_header.decode_header(to_value)))
    assert decoded.startswith(name) and decoded.endswith(f"<{email}>"), decoded
    assert message["Bcc"] is None and message["Subject"] == "Confirm your email address"
    assert all(not line.lower().startswith("bcc") for line in headers.split("\r\n"))
    assert not inbox.to("victim@example.org") and not inbox.to("evil@example.org")


# --- forgot your password ------------------------------------------------------------------------

def test_forgot_and_reset_end_every_session_clear_the_lock_and_sign_nobody_in(journeys):
    stack, inbox = journeys
    email, password = new_user(stack)
    app, signed_in = password_sign_in(stack, email, password)
    tokens = app.exchange(app.code_from(signed_in)).json()
    # Lock the account with wrong passwords.
    for _ in range(8):
        _, wrong = password_sign_in(stack, email, "wrong-" + password)
        if "too_many_attempts" in wrong.headers.get("Location", ""):
            break
    assert "too_many_attempts" in wrong.headers["Location"]

    assert forgot(stack, stack.session(), email).status_code == 200
    first = link(inbox.wait(email)[0][2], stack, "/login/reset")
    assert forgot(stack, stack.session(), email.upper()).status_code == 200
    (_, _, message, _) = inbox.wait(email, 2)[1]
    second = link(message, stack, "/login/reset")
    assert message["Subject"] == "Choose a new password" and "30 minutes" in text_part(message)
    assert requests.get(first, verify=stack.ca).status_code == 410, "a newer link voids the older"

    form = requests.get(second, verify=stack.ca)
    assert form.status_code == 200 and 'name="token"' in form.text and email in form.text
    post = lambda new, confirm=None: requests.post(stack.issuer + "/login/reset", verify=stack.ca, allow_redirects=False,  # noqa: E731
                                                   data={"token": token_of(second), "password": new, "confirm": confirm or new})
    for new, says in [("password", "10,000 most common"), ("short", "at least 8"), (email, "must not be your email")]:
        refused = post(new)
        assert refused.status_code == 400 and says in refused.text
    mismatch = post("a fine new password", "another one")
    assert mismatch.status_code == 400 and "differ" in mismatch.text
    new_password = strong_password()
    done = post(new_password)
    assert done.status_code == 200 and "every sign-in of your account has ended" in done.text
    assert "sso_session" not in done.headers.get("Set-Cookie", ""), "the link signs nobody in"
    assert post(strong_password()).status_code == 410, "single use"

    refreshed = stack.session().post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": app.client_id,
                                                                  "refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 400 and refreshed.json()["error"] == "invalid_grant", "the refresh token ended with its session"
    _, old = password_sign_in(stack, email, password)
    assert "invalid_credentials" in old.headers["Location"]
    _, new = password_sign_in(stack, email, new_password)
    assert new.status_code == 303 and new.headers["Location"].startswith("myapp:auth/callback?"), "the lock was cleared"
    events = audit(stack, "password_reset")
    assert [event["user"] for event in events].count(email) == 1
    assert all(token_of(second) not in json.dumps(event) for event in events + audit(stack, "password_reset_requested"))


def test_a_german_request_gets_a_german_mail(journeys):
    stack, inbox = journeys
    email, _ = new_user(stack)
    page = forgot(stack, stack.session(), email, headers={"Accept-Language": "de-DE,de;q=0.9"})
    assert page.status_code == 200 and "Sehen Sie in Ihr Postfach" in page.text
    (_, _, message, raw), = inbox.wait(email)
    assert message["Subject"] == "Wählen Sie ein neues Passwort"
    assert b"=?utf-8?" in raw.split(b"\r\n\r\n", 1)[0].lower(), "the subject travels RFC 2047-encoded"
    assert "Der Link funktioniert einmal, 30 Minuten lang." in text_part(message)
    assert 'lang="de"' in html_part(message)
    link(message, stack, "/login/reset")


def test_expired_and_unknown_links_get_a_clear_page(journeys):
    stack, inbox = journeys
    email, _ = new_user(stack)
    forgot(stack, stack.session(), email)
    url = link(inbox.wait(email)[0][2], stack, "/login/reset")
    # The clock cannot be moved: the row's expiry is, to a second ago.
    stack.execute("UPDATE account_links SET expires_at = ? WHERE user_id = (SELECT id FROM users WHERE email = ?)",
                  int(time.time()) - 1, email)
    for target in (url, stack.issuer + "/login/reset?token=" + "A" * 22, stack.issuer + "/login/reset?token=short",
                   stack.issuer + "/login/reset", stack.issuer + "/login/verify?token=%00" + "A" * 21,
                   stack.issuer + "/login/invitation?token=" + token_of(url)):
        page = requests.get(target, verify=stack.ca)
        assert page.status_code == 410 and "This link no longer works" in page.text, target
        assert "Ask for a new link" in page.text or "Sign in to get a new link" in page.text


def test_no_enumeration_same_status_body_and_time(journeys):
    """Known and unknown addresses get the same status and the same bytes
    (the typed address aside); and the same time, within noise: 30 requests
    each, interleaved (so a slow moment hits both), compared by median,
    with the noise taken as the larger interquartile range of the two."""
    stack, _ = journeys
    email, _ = new_user(stack)
    http = stack.session()
    timings = {"known": [], "unknown": []}
    bodies = {}
    for round_ in range(30):
        for kind in ("known", "unknown"):
            address = email if kind == "known" else f"nobody-{round_}-{secrets.token_hex(3)}@example.com"
            started = time.perf_counter()
            answer = forgot(stack, http, address)
            timings[kind].append(time.perf_counter() - started)
            assert answer.status_code == 200
            bodies.setdefault(kind, set()).add(answer.text.replace(address, "ADDRESS"))
    assert bodies["known"] == bodies["unknown"] and len(bodies["known"]) == 1, "one body for every address"
    assert_same_time(timings)

    timings = {"known": [], "unknown": []}
    bodies = {}
    for round_ in range(30):
        for kind in ("known", "unknown"):
            address = email if kind == "known" else fresh_address("enum")
            started = time.perf_counter()
            answer = sign_up(stack, http, address, password="an unusual enough password")
            timings[kind].append(time.perf_counter() - started)
            assert answer.status_code == 200
            bodies.setdefault(kind, set()).add(answer.text.replace(address, "ADDRESS"))
    assert bodies["known"] == bodies["unknown"] and len(bodies["known"]) == 1
    assert_same_time(timings)


def assert_same_time(timings):
    known, unknown = statistics.median(timings["known"]), statistics.median(timings["unknown"])

    def iqr(values):
        quartiles = statistics.quantiles(values, n=4)
        return quartiles[2] - quartiles[0]

    noise = max(iqr(timings["known"]), iqr(timings["unknown"]), 0.005)
    assert abs(known - unknown) <= noise, f"medians {known * 1000:.1f} ms and {unknown * 1000:.1f} ms, noise {noise * 1000:.1f} ms"


def test_the_sixth_message_in_an_hour_is_not_sent(journeys):
    stack, inbox = journeys
    email, _ = new_user(stack)
    answers = [forgot(stack, stack.session(), email) for _ in range(7)]
    assert len({(answer.status_code, answer.text) for answer in answers}) == 1, "the pages answer the same past the limit"
    inbox.wait(email, 5)
    time.sleep(5)
    assert len(inbox.to(email)) == 5
    limited = [event for event in audit(stack, "password_reset_requested") if event.get("user") == email]
    assert [event.get("reason") for event in limited].count("mail_limit") == 2


# --- invitations ---------------------------------------------------------------------------------

def test_an_invitation_sets_the_first_password_and_verifies_the_address(journeys):
    stack, inbox = journeys
    email = fresh_address("invited")
    invited = stack.ssoctl("user", "invite", email, "--name", "Ivy Invited")
    assert invited.returncode == 0, invited.stderr
    entry = user_entry(stack, email)
    assert entry["invitation_pending"] is True and entry["email_verified"] is False
    again = stack.ssoctl("user", "invite", email, "--name", "Ivy Invited")
    assert again.returncode == 1 and "already exists" in again.stderr

    (_, _, message, _), = inbox.wait(email)
    assert message["Subject"] == "Your new account" and "7 days" in text_part(message)
    url = link(message, stack, "/login/invitation")
    form = requests.get(url, verify=stack.ca)
    assert form.status_code == 200 and "Welcome: choose your password" in form.text
    weak = requests.post(stack.issuer + "/login/invitation", verify=stack.ca,
                         data={"token": token_of(url), "password": "12345678", "confirm": "12345678"})
    assert weak.status_code == 400 and "10,000 most common" in weak.text
    password = strong_password()
    done = requests.post(stack.issuer + "/login/invitation", verify=stack.ca,
                         data={"token": token_of(url), "password": password, "confirm": password})
    assert done.status_code == 200 and "Your password is set" in done.text
    assert user_entry(stack, email)["email_verified"] is True and user_entry(stack, email)["invitation_pending"] is False
    _, signed_in = password_sign_in(stack, email, password)
    assert signed_in.status_code == 303 and signed_in.headers["Location"].startswith("myapp:auth/callback?")
    sent = [event for event in audit(stack, "invitation_sent") if event["user"] == email]
    assert len(sent) == 1 and sent[0].get("ip") is None, "a command run on the host"


def test_ssoctl_refuses_weak_passwords_with_the_reason(journeys):
    stack, _ = journeys
    for password, says in [("password1", "10,000 most common"), ("short", "at least 8")]:
        added = stack.ssoctl("user", "add", fresh_address(), "--name", "W", "--password-stdin", input=password + "\n")
        assert added.returncode == 1 and says in added.stderr
    email, _ = new_user(stack)
    changed = stack.ssoctl("user", "passwd", email, "--password-stdin", input=email.upper() + "\n")
    assert changed.returncode == 1 and "email address" in changed.stderr


# --- closed mode and the nginx zones (the session's stack: GATEHOUSE_SIGNUP unset) ----------------

def test_closed_mode_offers_no_sign_up_but_still_the_reset(stack):
    http = stack.session()
    app = App(stack, http)
    location = app.authorize().headers["Location"]
    page = http.get(stack.issuer + location).text
    assert 'id="create-account"' not in page and 'id="forgot-password"' in page and "an error occurred" not in page
    expired = http.get(stack.issuer + "/login.html?error=expired").text
    assert 'id="forgot-password"' in expired and "an error occurred" not in expired
    closed = http.post(stack.issuer + "/login/signup", data={"email": fresh_address(), "name": "N", "password": strong_password()})
    assert closed.status_code == 404 and "No sign-up here" in closed.text
    # prompt=create is unknown where sign-up is closed: invalid_request, and discovery does not list it.
    refused = App(stack, http).authorize(prompt="create")
    assert refused.status_code == 303 and query(refused.headers["Location"])["error"] == "invalid_request", refused.headers
    discovery = http.get(stack.issuer + "/.well-known/openid-configuration").json()
    assert discovery["prompt_values_supported"] == ["none", "login", "consent", "select_account"]
    config = open(os.path.join(stack.home, "nginx", "nginx.conf")).read()
    assert "limit_req_zone $gatehouse_form_post_key zone=signup:10m rate=10r/m;" in config
    assert "limit_req_zone $gatehouse_form_post_key zone=reset:10m rate=10r/m;" in config
    # The reset zone counts posts from one address: past its burst, 429.
    codes = [http.post(stack.issuer + "/login/forgot", data={"email": fresh_address()}).status_code for _ in range(14)]
    assert codes[:5] == [200] * 5 and 429 in codes, codes
    assert http.get(stack.issuer + "/login/forgot").status_code == 200, "reading the form is not counted"
