"""Signing in through an upstream OpenID Connect provider, with plain HTTP
forms and one cookie jar (as a browser without JavaScript): the upstream is
a second real Gatehouse stack (its own home and ports, the first one's tls/
copied in, so the first trusts it), at https://127.0.0.1:PORT so that its
cookies and the downstream's (https://localhost:PORT) stay apart, as two
sites' cookies do. The downstream redeems the code at the upstream's token
endpoint over HTTPS and verifies its ID token against its JWKS."""
import base64
import json
import os
import secrets
import shutil
import tempfile
from urllib.parse import urlsplit

import pytest

from oidc_flow import App, query
from selenium.webdriver.common.by import By
from stack import DEMO_PASSWORD, Stack
from test_browser import (AuthorizationRequest, browser, browser_home, jwt_claims, query_of, screenshot,  # noqa: F401 (fixtures)
                          tls_mode, wait_for_element, wait_for_url)

CLIENT_ID = "gatehouse-downstream"
SECRET = "downstream-secret-" + "5" * 24
PASSWORD = "upstream pass phrase 7"


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def ok(result):
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def upstream(stack):
    home = tempfile.mkdtemp(prefix="gatehouse-e2e-upstream-")
    shutil.copytree(os.path.join(stack.home, "tls"), os.path.join(home, "tls"))
    provider = Stack(home=home)
    provider.owns_home = True
    provider.issuer = f"https://127.0.0.1:{provider.base}"
    provider.env["GATEHOUSE_ISSUER"] = provider.issuer
    provider.start()
    ok(provider.ssoctl("client", "add", CLIENT_ID, "--redirect-uri", stack.issuer + "/federation/callback", "--scope", "openid",
                       "--scope", "email", "--scope", "profile", "--secret-stdin", input=SECRET + "\n"))
    ok(stack.ssoctl("idp", "add", "corp", "--issuer", provider.issuer, "--client-id", CLIENT_ID, "--secret-stdin", "--label", "Corp SSO",
                    input=SECRET + "\n"))
    # The same provider asked for no address: its ID tokens carry none.
    ok(stack.ssoctl("idp", "add", "corp-noemail", "--issuer", provider.issuer, "--client-id", CLIENT_ID, "--secret-stdin",
                    "--scope", "openid", "--scope", "profile", input=SECRET + "\n"))
    yield provider
    stack.ssoctl("idp", "remove", "corp")
    stack.ssoctl("idp", "remove", "corp-noemail")
    provider.remove()


def upstream_user(upstream, email, name="Upstream User"):
    ok(upstream.ssoctl("user", "add", email, "--name", name, "--password-stdin", input=PASSWORD + "\n"))


class Trip:
    """One browser's sign-in at the downstream app through the provider."""

    def __init__(self, stack, upstream, http, provider="corp", **authorize):
        self.stack, self.upstream, self.http = stack, upstream, http
        self.app = App(stack, http)
        first = self.app.authorize(**authorize)
        assert first.status_code == 303, first.text
        self.login_page = first.headers["Location"]
        self.req = query(self.login_page)["req"]
        self.provider = provider

    def page(self):
        return self.http.get(self.stack.issuer + self.login_page)

    def leave(self):
        """The login page's "Continue with …" form: to the provider."""
        out = self.http.post(self.stack.issuer + "/login/federation", data={"req": self.req, "provider": self.provider},
                             allow_redirects=False)
        assert out.status_code == 303, out.text
        self.left = out
        self.at_provider = out.headers["Location"]
        assert self.at_provider.startswith(self.upstream.issuer + "/authorize?"), self.at_provider
        return query(self.at_provider)

    def sign_in_upstream(self, email, password=PASSWORD):
        """The provider's own login page, then its redirect to the callback (not followed)."""
        first = self.http.get(self.at_provider, allow_redirects=False)
        assert first.status_code == 303, first.text
        if first.headers["Location"].startswith(self.stack.issuer + "/federation/callback?"):
            self.callback = first.headers["Location"]  # signed in at the provider already (its SSO cookie)
            return self.callback
        upstream_req = query(first.headers["Location"])["req"]
        back = self.http.post(self.upstream.issuer + "/login", data={"req": upstream_req, "email": email, "password": password},
                              allow_redirects=False)
        assert back.status_code == 303, back.text
        self.callback = back.headers["Location"]
        assert self.callback.startswith(self.stack.issuer + "/federation/callback?"), self.callback
        return self.callback

    def come_back(self, http=None):
        return (http or self.http).get(self.callback, allow_redirects=False)

    def tokens(self, response):
        code = self.app.code_from(response)
        exchanged = self.app.exchange(code)
        assert exchanged.status_code == 200, exchanged.text
        return exchanged.json()


def local_user(stack, email):
    return stack.query("SELECT id, subject, email, name, password_hash, email_verified FROM users WHERE email = ?", email)


def links(stack):
    return stack.query("SELECT issuer, subject, provider, email FROM federated_identities ORDER BY email")


def test_the_login_page_offers_each_provider_as_a_plain_form(stack, upstream, http):
    trip = Trip(stack, upstream, http)
    page = trip.page()
    assert page.status_code == 200
    assert 'action="/login/federation"' in page.text and "Continue with Corp SSO" in page.text
    assert f'name="req" value="{trip.req}"' in page.text and 'name="provider" value="corp"' in page.text
    assert "Continue with corp-noemail" in page.text, "the label defaults to the name"
    german = http.get(stack.issuer + trip.login_page, headers={"Accept-Language": "de"})
    assert "Weiter mit Corp SSO" in german.text


def test_a_new_user_signs_in_through_the_provider_and_gets_a_verified_account(stack, upstream, http):
    email = f"carol-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email, name="Carol Upstream")
    trip = Trip(stack, upstream, http)
    sent = trip.leave()
    assert sent["response_type"] == "code" and sent["client_id"] == CLIENT_ID and sent["code_challenge_method"] == "S256"
    assert sent["redirect_uri"] == stack.issuer + "/federation/callback" and sent["scope"] == "openid email profile"
    assert len(sent["state"]) >= 43 and len(sent["nonce"]) >= 43 and len(sent["code_challenge"]) == 43
    binding = [cookie for cookie in http.cookies if cookie.name == "gh_federation"]
    assert binding and binding[0].path == "/federation" and binding[0].secure
    trip.sign_in_upstream(email)
    assert local_user(stack, email) == [], "nothing made before the provider's answer is verified"
    back = trip.come_back()
    assert back.status_code == 303, back.text
    tokens = trip.tokens(back)
    id_token = claims(tokens["id_token"])
    assert id_token["idp"] == "corp" and id_token["email"] == email and id_token["email_verified"] is True
    assert id_token["amr"] == ["pwd"] and id_token["acr"] == "urn:gatehouse:pwd", "the upstream's own amr"
    [(user_id, subject, stored_email, name, password_hash, verified)] = local_user(stack, email)
    assert id_token["sub"] == subject and name == "Carol Upstream" and password_hash == "" and verified == 1
    upstream_sub = upstream.query("SELECT subject FROM users WHERE email = ?", email)[0][0]
    assert (upstream.issuer, upstream_sub, "corp", email) in links(stack)
    # A later sign-in, in another browser: matched by (issuer, sub), the same account.
    again = Trip(stack, upstream, stack.session())
    again.leave()
    again.sign_in_upstream(email)
    assert claims(again.tokens(again.come_back())["id_token"])["sub"] == subject
    assert len(local_user(stack, email)) == 1
    events = [json.loads(line) for line in open(os.path.join(stack.home, "log", "audit.log"))]
    federated = [event for event in events if event["event"] == "federated_login" and event["user"] == email]
    assert [event["reason"] for event in federated] == ["created", None] and all(event["target"] == "corp" for event in federated)
    with open(os.path.join(stack.home, "log", "audit.log")) as audit:
        text = audit.read()
    assert query(trip.callback)["code"] not in text and query(trip.callback)["state"] not in text
    metrics = http.get(stack.ops + "/metrics").text
    assert 'gatehouse_federated_sign_ins_total{result="created"}' in metrics


def test_an_existing_address_is_linked_only_after_that_accounts_own_password(stack, upstream, http):
    """alice@example.com is a demo account downstream, and upstream someone
    has an account with her address. The provider's word does not link it."""
    [(alice_id, alice_sub, *_)] = local_user(stack, "alice@example.com")
    trip = Trip(stack, upstream, http)
    trip.leave()
    trip.sign_in_upstream("alice@example.com", DEMO_PASSWORD)
    asked = trip.come_back()
    assert asked.status_code == 303
    location = asked.headers["Location"]
    assert location.startswith("/login.html?") and query(location)["error"] == "federation_link"
    assert query(location)["login_hint"] == "alice@example.com" and query(location)["req"] == trip.req
    page = http.get(stack.issuer + location).text
    assert "already exists here" in page and 'action="/login/federation"' not in page
    assert [row for row in links(stack) if row[3] == "alice@example.com"] == [], "not linked on the provider's word"
    # Someone else's password in the same pending request links nothing.
    bob = http.post(stack.issuer + "/login", data={"req": trip.req, "email": "bob@example.com", "password": DEMO_PASSWORD},
                    allow_redirects=False)
    assert bob.status_code == 303
    assert [row for row in links(stack) if row[3] == "alice@example.com"] == []
    # Her own password, in a new pending request after the same trip again: linked.
    trip = Trip(stack, upstream, stack.session())
    trip.leave()
    trip.sign_in_upstream("alice@example.com", DEMO_PASSWORD)
    assert query(trip.come_back().headers["Location"])["error"] == "federation_link"
    proved = trip.http.post(stack.issuer + "/login", data={"req": trip.req, "email": "alice@example.com", "password": DEMO_PASSWORD},
                            allow_redirects=False)
    assert proved.status_code == 303
    assert claims(trip.tokens(proved)["id_token"])["sub"] == alice_sub
    upstream_sub = upstream.query("SELECT subject FROM users WHERE email = ?", "alice@example.com")[0][0]
    assert (upstream.issuer, upstream_sub, "corp", "alice@example.com") in links(stack)
    # From now on the provider signs her in directly.
    direct = Trip(stack, upstream, stack.session())
    direct.leave()
    direct.sign_in_upstream("alice@example.com", DEMO_PASSWORD)
    id_token = claims(direct.tokens(direct.come_back())["id_token"])
    assert id_token["sub"] == alice_sub and id_token["idp"] == "corp"
    listed = stack.ssoctl("user", "links", "alice@example.com", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(link["provider"], link["subject"]) for link in json.loads(listed.stdout)] == [("corp", upstream_sub)]


def test_no_verified_address_and_no_link_is_refused_and_nothing_is_made(stack, upstream, http):
    email = f"erin-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email)
    trip = Trip(stack, upstream, http, provider="corp-noemail")
    trip.leave()
    trip.sign_in_upstream(email)
    refused = trip.come_back()
    assert refused.status_code == 303 and query(refused.headers["Location"])["error"] == "federation_no_email"
    assert "did not confirm an email address" in http.get(stack.issuer + refused.headers["Location"]).text
    assert local_user(stack, email) == [] and all(row[3] != email for row in links(stack))
    # The pending request still waits: the user may sign in another way.
    assert http.post(stack.issuer + "/login", data={"req": trip.req, "email": "bob@example.com", "password": DEMO_PASSWORD},
                     allow_redirects=False).status_code == 303


def test_cancelling_at_the_provider_sends_the_app_access_denied(stack, upstream, http):
    trip = Trip(stack, upstream, http)
    sent = trip.leave()
    # What a provider sends when its user cancels (RFC 6749 §4.1.2.1).
    cancelled = http.get(stack.issuer + "/federation/callback",
                         params={"state": sent["state"], "error": "access_denied", "iss": upstream.issuer}, allow_redirects=False)
    assert cancelled.status_code == 303
    answer = query(cancelled.headers["Location"])
    assert cancelled.headers["Location"].startswith(trip.app.redirect_uri)
    assert answer["error"] == "access_denied" and answer["state"] == trip.app.state and answer["iss"] == stack.issuer
    # The pending request is spent: the login form no longer continues it.
    late = http.post(stack.issuer + "/login", data={"req": trip.req, "email": "bob@example.com", "password": DEMO_PASSWORD},
                     allow_redirects=False)
    assert "error=expired" in late.headers["Location"]


def test_forged_replayed_and_other_browsers_callbacks_get_an_error_page_and_change_nothing(stack, upstream, http):
    email = f"frank-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email)
    trip = Trip(stack, upstream, http)
    sent = trip.leave()
    trip.sign_in_upstream(email)
    code = query(trip.callback)["code"]
    sessions_before = stack.query("SELECT count(*) FROM sso_sessions")
    # Another browser (no binding cookie) with the real state and code.
    stranger = trip.come_back(stack.session())
    assert stranger.status_code == 400 and "could not be completed" in stranger.text
    # The state is spent by that attempt: its own browser cannot finish either.
    spent = trip.come_back()
    assert spent.status_code == 400
    forged = http.get(stack.issuer + "/federation/callback", params={"state": secrets.token_urlsafe(32), "code": code},
                      allow_redirects=False)
    assert forged.status_code == 400
    empty = http.get(stack.issuer + "/federation/callback", allow_redirects=False)
    assert empty.status_code == 400
    assert stack.query("SELECT count(*) FROM sso_sessions") == sessions_before
    assert local_user(stack, email) == []
    # A completed callback replayed in its own browser: refused too.
    done = Trip(stack, upstream, http)
    done.leave()
    done.sign_in_upstream(email)
    assert done.come_back().status_code == 303
    users_after = stack.query("SELECT count(*) FROM users")
    replay = done.come_back()
    assert replay.status_code == 400
    assert stack.query("SELECT count(*) FROM users") == users_after
    assert sent["state"] != query(done.callback)["state"]


def test_a_form_post_answer_works_as_apples_does(stack, upstream, http):
    """Apple answers with a cross-site POST (response_mode=form_post): the
    callback takes it the same way, bound by state and the SameSite=None cookie."""
    email = f"gina-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email, name="Gina")
    trip = Trip(stack, upstream, http)
    trip.leave()
    answer = query(trip.sign_in_upstream(email))
    posted = http.post(stack.issuer + "/federation/callback",
                       data={"state": answer["state"], "code": answer["code"], "iss": answer["iss"],
                             "user": json.dumps({"name": {"firstName": "G"}})},
                       headers={"Origin": "https://appleid.apple.com", "Sec-Fetch-Site": "cross-site"}, allow_redirects=False)
    assert posted.status_code == 303, posted.text
    assert claims(trip.tokens(posted)["id_token"])["email"] == email
    assert "SameSite=None" in trip.left.headers["Set-Cookie"] and "Path=/federation" in trip.left.headers["Set-Cookie"]


def test_an_answer_naming_another_issuer_or_none_is_refused_before_its_code_goes_anywhere(stack, upstream, http):
    """RFC 9207 and RFC 9700 §4.4 (mix-up): every provider answers at one
    callback; the upstream advertises `authorization_response_iss_parameter_supported`,
    so its answers must name it."""
    email = f"hana-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email)
    for iss in ["https://attacker.example", None]:
        trip = Trip(stack, upstream, http)
        trip.leave()
        answer = query(trip.sign_in_upstream(email))
        assert answer["iss"] == upstream.issuer
        params = {"state": answer["state"], "code": answer["code"], **({"iss": iss} if iss else {})}
        refused = http.get(stack.issuer + "/federation/callback", params=params, allow_redirects=False)
        assert refused.status_code == 303 and query(refused.headers["Location"])["error"] == "federation_failed", iss
    assert local_user(stack, email) == []
    failures = [json.loads(line) for line in open(os.path.join(stack.home, "log", "audit.log"))]
    assert [event["reason"] for event in failures if event["event"] == "federated_login_failure"][-2:] == ["provider_error", "provider_error"]


# --- in a real Chromium -------------------------------------------------------

@pytest.mark.parametrize("javascript", [True, False])
def test_in_chromium_a_person_continues_with_the_provider_and_comes_back_signed_in(stack, upstream, browser, screenshot, javascript):
    email = f"ida-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email, name="Ida Browser")
    driver = browser(javascript=javascript)
    request = AuthorizationRequest(stack, login_hint=None)
    driver.get(request.url)
    wait_for_url(driver, stack.issuer + "/login.html?", "/authorize without a session")
    control = wait_for_element(driver, By.ID, "provider-corp")
    assert control.text == "Continue with Corp SSO"
    if javascript:
        screenshot(driver, "login-providers.png")
    control.click()
    wait_for_url(driver, upstream.issuer + "/login.html?", "the provider's own sign-in page")
    driver.find_element(By.ID, "email").send_keys(email)
    driver.find_element(By.ID, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form.login button[type=submit]").click()
    wait_for_url(driver, request.redirect_uri, "back at the app after the provider")
    tokens = request.exchange(stack.session(), query_of(driver.current_url)["code"]).json()
    id_token = jwt_claims(tokens["id_token"])
    assert id_token["idp"] == "corp" and id_token["email"] == email and id_token["name"] == "Ida Browser"
    # /account: the link, the session "via corp", and no unlinking of the only way in.
    driver.get(stack.issuer + "/account")
    wait_for_element(driver, By.ID, "provider-links")
    assert email in driver.find_element(By.ID, "provider-links").text
    assert "via corp" in driver.find_element(By.ID, "sessions").text
    driver.find_element(By.CSS_SELECTOR, "#provider-links button[type=submit]").click()
    wait_for_url(driver, stack.issuer + "/account?done=provider_not_unlinked", "refused: the only way in")
    assert "only way to sign in" in driver.page_source
    assert len(links_of(stack, email)) == 1


def links_of(stack, email):
    return stack.query("SELECT provider FROM federated_identities WHERE email = ?", email)


def test_a_link_is_unlinked_on_the_account_page_once_another_way_in_exists(stack, upstream, http):
    """alice has a password: her link to corp may go, and the provider then
    no longer signs her in (its next return offers a link again)."""
    email = "alice@example.com"
    if not links_of(stack, email):
        trip = Trip(stack, upstream, stack.session())
        trip.leave()
        trip.sign_in_upstream(email, DEMO_PASSWORD)
        trip.come_back()
        assert trip.http.post(stack.issuer + "/login", data={"req": trip.req, "email": email, "password": DEMO_PASSWORD},
                              allow_redirects=False).status_code == 303
    assert links_of(stack, email) == [("corp",)]
    # Signed in to /account through the issuer's own flow, with the password.
    account = stack.session()
    first = account.get(stack.issuer + "/account", allow_redirects=True)
    req = query(first.url)["req"]
    signed_in = account.post(stack.issuer + "/login", data={"req": req, "email": email, "password": DEMO_PASSWORD})
    assert signed_in.status_code == 200 and 'id="provider-links"' in signed_in.text
    token = signed_in.text.split('name="csrf" value="')[1].split('"')[0]
    upstream_sub = upstream.query("SELECT subject FROM users WHERE email = ?", email)[0][0]
    other = account.post(stack.issuer + "/account/links/remove", data={"csrf": token, "issuer": upstream.issuer, "subject": "someone-else"},
                         allow_redirects=False)
    assert other.headers["Location"] == "/account?done=provider_not_found"
    removed = account.post(stack.issuer + "/account/links/remove", data={"csrf": token, "issuer": upstream.issuer, "subject": upstream_sub},
                           allow_redirects=False)
    assert removed.headers["Location"] == "/account?done=provider_unlinked"
    assert links_of(stack, email) == []
    events = [json.loads(line) for line in open(os.path.join(stack.home, "log", "audit.log"))]
    assert any(event["event"] == "provider_unlinked" and event["user"] == email and event["target"] == "corp" for event in events)


def test_two_first_sign_ins_of_one_upstream_account_at_once_make_one_account(stack, upstream):
    """Two browsers come back from the provider at the same moment, for an
    account not linked yet: one account, one link, both signed in."""
    from concurrent.futures import ThreadPoolExecutor

    email = f"jo-{secrets.token_hex(3)}@corp.example"
    upstream_user(upstream, email)
    trips = [Trip(stack, upstream, stack.session()) for _ in range(2)]
    for trip in trips:
        trip.leave()
        trip.sign_in_upstream(email)
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(lambda trip: trip.come_back(), trips))
    assert [answer.status_code for answer in answers] == [303, 303], [answer.text for answer in answers]
    subjects = {claims(trip.tokens(answer)["id_token"])["sub"] for trip, answer in zip(trips, answers)}
    assert len(subjects) == 1 and len(local_user(stack, email)) == 1
    assert len([row for row in links(stack) if row[3] == email]) == 1
