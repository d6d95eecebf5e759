"""Seed scenarios 2A–2D replayed by a simulated app, concurrent refreshes, and
a signing-key rotation under load, all through nginx with TLS."""
import base64
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

import database
from oidc_flow import App, query
from stack import Stack


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class MobileApp:
    """Holds the access token in memory and the refresh token in 'the keychain';
    its system browser is an App with a cookie jar."""

    def __init__(self, stack):
        self.stack, self.browser = stack, stack.session()
        self.http = stack.session()
        self.keychain = {}
        self.access_token = None

    def sign_in(self):
        app = App(self.stack, self.browser)
        first = app.authorize()
        if first.headers["Location"].startswith("/login.html"):
            first = app.login(first.headers["Location"])
        self.store(app.exchange(app.code_from(first)))

    def store(self, response):
        assert response.status_code == 200, response.text
        body = response.json()
        self.access_token = body["access_token"]
        self.keychain["refresh_token"] = body["refresh_token"]

    def refresh(self):
        return self.http.post(self.stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": "mobile-app-001",
                                                                  "refresh_token": self.keychain["refresh_token"]})

    def call_api(self):
        return self.http.get(self.stack.api_a + "/api/data", headers={"Authorization": "Bearer " + self.access_token})

    def call_api_transparently(self):
        """What a real app does: on 401 token_expired, refresh and retry once;
        when the refresh is refused, sign in again through the browser (SSO)."""
        response = self.call_api()
        if response.status_code == 401 and response.json()["error"] == "token_expired":
            refreshed = self.refresh()
            if refreshed.status_code == 200:
                self.store(refreshed)
            else:
                assert refreshed.json()["error"] == "invalid_grant"
                self.sign_in()
            response = self.call_api()
        return response


def expired_copy(stack, token):
    """The same access token, expired an hour ago, signed with the issuer's key."""
    header, payload, _ = token.split(".")
    kid = json.loads(base64.urlsafe_b64decode(header + "=="))["kid"]
    claims = claims_of(token)
    claims["exp"], claims["iat"], claims["nbf"] = int(time.time()) - 3600, int(time.time()) - 4500, int(time.time()) - 4500
    key = serialization.load_pem_private_key(database.private_key_pem(stack, kid), password=None)
    body = header + "." + b64url(json.dumps(claims).encode())
    return body + "." + b64url(key.sign(body.encode(), padding.PKCS1v15(), hashes.SHA256()))


def test_seed_scenarios_2a_to_2d_in_order(stack):
    app = MobileApp(stack)
    # Scenario 1 + 2A: first sign-in, token in memory, both APIs.
    app.sign_in()
    assert app.call_api().status_code == 200
    # 2B: the app is killed (memory gone) and relaunched: refresh from the keychain.
    app.access_token = None
    spent = app.keychain["refresh_token"]
    app.store(app.refresh())
    assert app.keychain["refresh_token"] != spent, "rotated"
    assert app.call_api().status_code == 200
    # 2C: the access token has expired; the API says so and the app refreshes transparently.
    app.access_token = expired_copy(stack, app.access_token)
    expired = app.call_api()
    assert expired.status_code == 401 and expired.json()["error"] == "token_expired"
    app.access_token = expired_copy(stack, app.access_token)
    assert app.call_api_transparently().status_code == 200
    # 2D: the refresh token has expired (its clock moved on), the SSO cookie is alive:
    # invalid_grant, then a browser sign-in that never shows the login page.
    stack.execute("UPDATE refresh_tokens SET expires_at = 1 WHERE used_at IS NULL")
    assert app.refresh().json()["error"] == "invalid_grant"
    second = App(stack, app.browser).authorize()
    assert "code=" in second.headers["Location"], "SSO cookie: no login page"
    app.access_token = expired_copy(stack, app.access_token)
    assert app.call_api_transparently().status_code == 200


def test_grace_retry_and_reuse_through_nginx(stack):
    app = MobileApp(stack)
    app.sign_in()
    spent = app.keychain["refresh_token"]
    first = app.refresh().json()
    retry = app.refresh().json()  # the reply was lost: same token again, within the window
    assert retry["refresh_token"] == first["refresh_token"]
    app.keychain["refresh_token"] = first["refresh_token"]
    app.store(app.refresh())      # the successor is used ...
    app.keychain["refresh_token"] = spent
    assert app.refresh().json()["error"] == "invalid_grant"  # ... so the spent one now kills the family
    app.keychain["refresh_token"] = first["refresh_token"]
    assert app.refresh().json()["error"] == "invalid_grant"


def test_concurrent_refreshes_yield_one_successor_and_no_5xx(stack):
    app = MobileApp(stack)
    app.sign_in()
    token = app.keychain["refresh_token"]

    def refresh(_):
        response = stack.session().post(stack.issuer + "/token", data={
            "grant_type": "refresh_token", "client_id": "mobile-app-001", "refresh_token": token})
        return response.status_code, response.json().get("refresh_token") or response.json().get("error")

    with ThreadPoolExecutor(max_workers=20) as pool:
        answers = list(pool.map(refresh, range(20)))
    assert all(status in (200, 400) for status, _ in answers), answers
    successors = {value for status, value in answers if status == 200}
    assert len(successors) == 1, answers
    assert all(value == "invalid_grant" for status, value in answers if status == 400)


def test_key_rotation_under_load_fails_no_request_and_a_retired_key_stops_working():
    # Short times so the test is quick: the APIs refresh their JWKS every 2 s,
    # and a rotated key signs 4 s after it is published.
    rotating = Stack(extra_env={"GATEHOUSE_JWKS_MAX_AGE": "2", "GATEHOUSE_KEY_ACTIVATION_DELAY": "4",
                                "GATEHOUSE_TOKEN_RATE": "1000r/s", "GATEHOUSE_LOGIN_RATE": "1000r/s",
                                "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}).start()
    try:
        app = MobileApp(rotating)
        app.sign_in()
        old_token = app.access_token
        old_kid = json.loads(base64.urlsafe_b64decode(old_token.split(".")[0] + "=="))["kid"]
        failures, kids, stop = [], set(), threading.Event()

        def load():
            worker = MobileApp(rotating)
            worker.sign_in()
            while not stop.is_set():
                refreshed = worker.refresh()
                if refreshed.status_code != 200:
                    failures.append(("refresh", refreshed.status_code, refreshed.text))
                    return
                worker.store(refreshed)
                kids.add(json.loads(base64.urlsafe_b64decode(worker.access_token.split(".")[0] + "=="))["kid"])
                answer = worker.call_api()
                if answer.status_code != 200:
                    failures.append(("api", answer.status_code, answer.text))

        threads = [threading.Thread(target=load) for _ in range(3)]
        for thread in threads:
            thread.start()
        time.sleep(1)
        rotated = rotating.ssoctl("keys", "rotate")
        assert rotated.returncode == 0, rotated.stderr
        new_kid = rotated.stdout.split()[1]
        time.sleep(8)
        stop.set()
        for thread in threads:
            thread.join()
        assert failures == [], failures[:3]
        assert {old_kid, new_kid} <= kids, "tokens were signed by both keys during the run"

        assert rotating.ssoctl("keys", "retire", old_kid).returncode == 0
        deadline = time.time() + 10
        while time.time() < deadline:
            answer = app.http.get(rotating.api_a + "/api/data", headers={"Authorization": "Bearer " + old_token})
            if answer.status_code == 401:
                break
            time.sleep(0.5)
        assert answer.status_code == 401 and answer.json()["error"] == "unknown_signing_key"
    finally:
        rotating.remove()
