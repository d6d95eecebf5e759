"""Changing the account's email address, end to end with plain HTTP forms:
/account (inside "confirm it's you") mails the new address a link; only that
link, used, moves the account; the old address is told, with a link that
takes the account back. Mail travels for real (getting_in_mail.py: the
outbox, gatehouse-mailer, an aiosmtpd server on loopback)."""
import json
import re

import requests

from getting_in_mail import (audit, fresh_address, journeys, link, new_user, strong_password, text_part, token_of,  # noqa: F401
                              user_entry)
from oidc_flow import App
from test_account_password import form_token, refreshes, signed_in


def ask(stack, http, new_email, current=None, **headers):
    """POST /account/email; the `done=` it leads back with."""
    data = {"csrf": form_token(stack, http), "email": new_email}
    if current is not None:
        data["current"] = current
    answer = http.post(stack.issuer + "/account/email", data=data, headers=headers, allow_redirects=False)
    assert answer.status_code == 303, (answer.status_code, answer.text)
    return answer.headers["Location"].split("done=", 1)[1]


def press(stack, url, path):
    """The button of a link's page: a same-origin POST of its token."""
    return requests.post(stack.issuer + path, data={"token": token_of(url)}, verify=stack.ca, allow_redirects=False)


def signs_in(stack, email, password):
    http = stack.session()
    app = App(stack, http)
    answer = app.login(app.authorize().headers["Location"], email=email, password=password)
    return answer.status_code == 303 and answer.headers["Location"].startswith("myapp:auth/callback?")


def links_of(stack, email, purpose):
    return stack.query("SELECT count(*) FROM account_links WHERE purpose = ? AND user_id = (SELECT id FROM users WHERE email = ?)",
                       purpose, email)[0][0]


def test_the_new_address_moves_the_account_only_through_its_link_and_the_old_one_is_told(journeys):
    stack, inbox = journeys
    old, password = new_user(stack)
    http, tokens = signed_in(stack, old, password)
    new = fresh_address("new")

    assert ask(stack, http, new) == "password_missing", "outside the confirmed window the form needs the password"
    assert ask(stack, http, new, current="wrong-" + password) == "confirm_wrong"
    assert ask(stack, http, new, current=password) == "email_sent"
    (_, _, message, _) = inbox.wait(new)[0]
    assert message["Subject"] == "Confirm your new email address" and new in text_part(message)
    url = link(message, stack, "/login/email-change")
    assert user_entry(stack, old)["email"] == old, "nothing moves before the link is used"

    page = requests.get(url, verify=stack.ca)
    assert page.status_code == 200 and new in page.text and 'action="/login/email-change"' in page.text
    assert user_entry(stack, old) is not None and user_entry(stack, new) is None, "opening the link changes nothing"

    done = press(stack, url, "/login/email-change")
    assert done.status_code == 200 and f"is now <strong>{new}</strong>" in done.text
    assert press(stack, url, "/login/email-change").status_code == 410, "single use"
    moved = user_entry(stack, new)
    assert moved and moved["email_verified"] is True and user_entry(stack, old) is None
    assert signs_in(stack, new, password) and not signs_in(stack, old, password)
    account = http.get(stack.issuer + "/account")
    assert account.status_code == 200 and f'id="email-address">{new}<' in account.text, "the session that asked stays"
    assert refreshes(stack, tokens), "and so do its tokens"

    (_, _, notice, _) = inbox.wait(old)[-1]
    assert notice["Subject"] == "Your email address was changed" and new in text_part(notice)
    assert link(notice, stack, "/login/email-revert")
    assert [(event["user"], event["target"]) for event in audit(stack, "email_changed") if event["user"] == old] == [(old, new)]
    assert all(token_of(url) not in json.dumps(event) for event in audit(stack, "email_changed") + audit(stack, "email_change_requested"))


def test_it_wasnt_me_takes_the_account_back_with_a_new_password_and_ends_every_sign_in(journeys):
    stack, inbox = journeys
    old, password = new_user(stack)
    # The taker: signed in, TOTP of their own, the account moved away.
    http, tokens = signed_in(stack, old, password)
    assert stack.ssoctl("user", "totp", old).returncode == 0, "a taker's TOTP, which would lock the owner out"
    taker = fresh_address("taker")
    assert ask(stack, http, taker, current=password) == "email_sent"
    assert press(stack, link(inbox.wait(taker)[0][2], stack, "/login/email-change"), "/login/email-change").status_code == 200
    revert_url = link(inbox.wait(old)[-1][2], stack, "/login/email-revert")

    form = requests.get(revert_url, verify=stack.ca)
    assert form.status_code == 200 and old in form.text and "passkeys and two-step sign-in are removed" in form.text
    post = lambda new_password, confirm=None: requests.post(  # noqa: E731
        stack.issuer + "/login/email-revert", verify=stack.ca, allow_redirects=False,
        data={"token": token_of(revert_url), "password": new_password, "confirm": confirm or new_password})
    refused = post(old)
    assert refused.status_code == 400 and "must not be your email" in refused.text, "the policy judges the restored address"
    assert user_entry(stack, taker) is not None, "a refused form changes nothing"
    new_password = strong_password()
    done = post(new_password)
    assert done.status_code == 200 and "back at its old address" in done.text
    assert post(strong_password()).status_code == 410, "single use"

    restored = user_entry(stack, old)
    assert restored and restored["email_verified"] is True and user_entry(stack, taker) is None
    assert stack.query("SELECT count(*) FROM totp_credentials WHERE user_id = (SELECT id FROM users WHERE email = ?)", old) == [(0,)]
    assert not refreshes(stack, tokens), "the taker's tokens ended with every session"
    assert http.get(stack.issuer + "/account", allow_redirects=False).status_code == 303, "the taker's browser is signed out"
    assert signs_in(stack, old, new_password), "the owner signs in (no TOTP asked: it went)"
    assert not signs_in(stack, old, password) and not signs_in(stack, taker, password)
    events = audit(stack, "email_change_reverted")
    assert [(event["user"], event["target"]) for event in events if event["target"] == old] == [(taker, old)]


def test_an_address_with_an_account_gets_a_notice_and_the_answer_is_the_same(journeys):
    stack, inbox = journeys
    old, password = new_user(stack)
    other, _ = new_user(stack)
    http, _ = signed_in(stack, old, password)
    assert ask(stack, http, other.upper(), current=password) == "email_sent", "the same answer as for a free address"
    (_, _, notice, _) = inbox.wait(other.upper())[0]
    assert notice["Subject"] == "Someone tried to move an account to your address"
    assert "/login/email-change" not in text_part(notice)
    assert links_of(stack, old, "email_change") == 0
    assert [event["reason"] for event in audit(stack, "email_change_requested") if event["user"] == old] == ["address_taken"]


def test_refusals_change_nothing_and_send_nothing(journeys):
    stack, inbox = journeys
    old, password = new_user(stack)
    http, _ = signed_in(stack, old, password)
    before = len(inbox.messages)
    for bad in ["not-an-address", "a@b.example\r\nBcc: x@example.com", "", "x" * 300 + "@example.com", "nul\x00@example.com"]:
        assert ask(stack, http, bad, current=password) in ("email_invalid",), repr(bad)
    assert ask(stack, http, old.upper(), current=password) == "email_same"
    cross = http.post(stack.issuer + "/account/email", data={"csrf": form_token(stack, http), "email": fresh_address(),
                                                            "current": password},
                      headers={"Origin": "https://evil.example"}, allow_redirects=False)
    assert cross.status_code == 403
    assert links_of(stack, old, "email_change") == 0 and user_entry(stack, old)["email"] == old
    assert len(inbox.messages) == before


def test_a_newer_request_voids_the_older_link_and_a_taken_address_refuses_the_move(journeys):
    stack, inbox = journeys
    old, password = new_user(stack)
    http, _ = signed_in(stack, old, password)
    first, second = fresh_address("first"), fresh_address("second")
    assert ask(stack, http, first, current=password) == "email_sent"
    first_url = link(inbox.wait(first)[0][2], stack, "/login/email-change")
    assert ask(stack, http, second, current=password) == "email_sent"
    second_url = link(inbox.wait(second)[0][2], stack, "/login/email-change")
    assert requests.get(first_url, verify=stack.ca).status_code == 410, "a newer request voids the older link"
    assert press(stack, first_url, "/login/email-change").status_code == 410

    new_user(stack, email=second)  # someone else got the address meanwhile
    taken = press(stack, second_url, "/login/email-change")
    assert taken.status_code == 409 and "Another account uses this address" in taken.text
    assert user_entry(stack, old)["email"] == old, "nothing moved"


def test_the_notice_to_the_old_address_goes_past_its_hourly_limit(journeys):
    """Five reset requests spend the old address's hourly mails; the notice
    of the change must still reach it, or a taker could move the account
    unnoticed."""
    stack, inbox = journeys
    old, password = new_user(stack)
    for _ in range(6):
        assert requests.post(stack.issuer + "/login/forgot", data={"email": old}, verify=stack.ca).status_code == 200
    inbox.wait(old, 5)
    http, _ = signed_in(stack, old, password)
    new = fresh_address()
    assert ask(stack, http, new, current=password) == "email_sent"
    assert press(stack, link(inbox.wait(new)[0][2], stack, "/login/email-change"), "/login/email-change").status_code == 200
    subjects = [entry[2]["Subject"] for entry in inbox.wait(old, 6)]
    assert subjects.count("Choose a new password") == 5 and subjects[-1] == "Your email address was changed"
    # The reset links mailed to the old address no longer reach the account.
    reset_url = link(inbox.to(old)[4][2], stack, "/login/reset")
    assert requests.get(reset_url, verify=stack.ca).status_code == 410
    assert re.search(r"/login/email-revert\?token=", text_part(inbox.to(old)[-1][2]))
