"""Races through nginx with TLS on the shared stack: one code redeemed by 50
clients at once, one refresh token presented 50 times at once, wrong
passwords in parallel against the login throttle, and signing-key rotations
(--now) while apps refresh and call api-a.

Every concurrent burst is lined up on a barrier so the requests really
overlap; each test uses users and source addresses of its own."""
import json
import base64
import os
import random
import secrets
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from requests.adapters import HTTPAdapter

from oidc_flow import App, query
from stack import Stack

# Loopback addresses of this file's own (test_account_security: 127.64-250.x.y,
# test_hostile_generated: 127.2-63.x.y).
_prefix = f"127.{random.randint(251, 254)}.{random.randint(1, 250)}"
_next_address = iter(range(1, 255))
ACCOUNT_LIMIT = 5  # LoginThrottlePolicy.perAccount


class SourceAddressAdapter(HTTPAdapter):
    def __init__(self, source, **kwargs):
        self.source = source
        super().__init__(**kwargs)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.source, 0)
        super().init_poolmanager(*args, **kwargs)


def client(stack, address=None):
    http = stack.session()
    http.mount("https://", SourceAddressAdapter(address or f"{_prefix}.{next(_next_address)}"))
    return http


def new_user(stack):
    email = f"race-{secrets.token_hex(5)}@example.com"
    password = "pw-" + secrets.token_urlsafe(12)
    added = stack.ssoctl("user", "add", email, "--name", "Race Test", "--password-stdin", input=password + "\n")
    assert added.returncode == 0, added.stderr
    return email, password


def signed_in_app(stack, http=None):
    """A fresh user signed in on a fresh address: the app and its code."""
    email, password = new_user(stack)
    app = App(stack, http or client(stack))
    first = app.authorize()
    assert first.status_code == 303, first.text
    second = app.login(first.headers["Location"], email=email, password=password)
    assert second.status_code == 303, second.text
    return app, app.code_from(second), email


def at_once(count, action):
    """Runs action(i) for i in range(count) on count threads released together."""
    barrier = threading.Barrier(count, timeout=30)

    def run(index):
        barrier.wait()
        return action(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def answer(response):
    try:
        body = response.json()
    except ValueError:
        body = {"text": response.text[:200]}
    return response.status_code, body


def test_fifty_concurrent_redemptions_of_one_code_give_exactly_one_token_response(stack):
    app, code, _ = signed_in_app(stack)
    sessions = [client(stack) for _ in range(50)]

    answers = at_once(50, lambda i: answer(App.exchange(_clone(app, sessions[i]), code)))
    statuses = sorted(status for status, _ in answers)
    assert all(status < 500 for status in statuses), answers
    assert statuses.count(200) == 1, statuses
    refused = [body for status, body in answers if status != 200]
    assert len(refused) == 49 and all(body.get("error") == "invalid_grant" for body in refused), refused[:3]
    assert all(status == 400 for status, _ in answers if status != 200), statuses


def _clone(app, http):
    """The same app (verifier, redirect URI, client) on another connection."""
    copy = App(app.stack, http, client_id=app.client_id, redirect_uri=app.redirect_uri, scope=app.scope)
    copy.verifier, copy.challenge, copy.state, copy.nonce = app.verifier, app.challenge, app.state, app.nonce
    return copy


def test_fifty_concurrent_refreshes_rotate_once_and_leave_one_live_token(stack):
    app, code, email = signed_in_app(stack)
    tokens = app.exchange(code).json()
    spent = tokens["refresh_token"]
    sessions = [client(stack) for _ in range(50)]

    def refresh(index):
        return answer(sessions[index].post(stack.issuer + "/token", data={
            "grant_type": "refresh_token", "client_id": app.client_id, "refresh_token": spent}))

    answers = at_once(50, refresh)
    assert all(status in (200, 400) for status, _ in answers), [a for a in answers if a[0] not in (200, 400)][:3]
    successors = {body["refresh_token"] for status, body in answers if status == 200}
    assert len(successors) == 1, f"{len(successors)} distinct successors"
    assert all(body.get("error") == "invalid_grant" for status, body in answers if status == 400)
    successor = successors.pop()
    assert successor != spent

    user_id = stack.query("SELECT id FROM users WHERE email = ?", email)[0][0]
    families = stack.query("SELECT DISTINCT family_id FROM refresh_tokens WHERE user_id = ?", user_id)
    assert len(families) == 1, families
    live = stack.query("SELECT token_hash FROM refresh_tokens WHERE family_id = ? AND used_at IS NULL AND revoked_at IS NULL",
                       *families[0])
    assert len(live) == 1, f"{len(live)} live tokens in the family"
    total = stack.query("SELECT count(*) FROM refresh_tokens WHERE family_id = ?", *families[0])[0][0]
    assert total == 2, f"one rotation: the spent token and its successor, not {total} rows"
    # The live one is the successor every 200 carried, and it works.
    refreshed = client(stack).post(stack.issuer + "/token", data={
        "grant_type": "refresh_token", "client_id": app.client_id, "refresh_token": successor})
    assert refreshed.status_code == 200, refreshed.text


def test_concurrent_wrong_passwords_check_at_most_five_and_the_lock_holds(stack):
    email, password = new_user(stack)
    attempts = 30
    # One address per browser: nginx's per-address burst never answers 429 and
    # the per-address throttle never trips, so only the account lock counts.
    browsers = [client(stack) for _ in range(attempts)]
    pages = []
    for browser in browsers:
        first = App(stack, browser).authorize()
        assert first.status_code == 303 and first.headers["Location"].startswith("/login.html?client_id="), first.text
        pages.append(first.headers["Location"])

    def guess(index):
        response = browsers[index].post(stack.issuer + "/login", allow_redirects=False, data={
            "req": query(pages[index])["req"], "email": email, "password": f"wrong {index}"})
        assert response.status_code == 303, (response.status_code, response.text[:200])
        return query(response.headers["Location"]).get("error")

    errors = at_once(attempts, guess)
    checked = errors.count("invalid_credentials")
    assert 1 <= checked <= ACCOUNT_LIMIT, errors
    assert errors.count("too_many_attempts") == attempts - checked, errors
    # The right password, from a browser that never failed, is refused too.
    fresh = client(stack)
    first = App(stack, fresh).authorize()
    locked = fresh.post(stack.issuer + "/login", allow_redirects=False, data={
        "req": query(first.headers["Location"])["req"], "email": email, "password": password})
    assert query(locked.headers["Location"]).get("error") == "too_many_attempts"
    assert "sso_session" not in fresh.cookies


def kid_of(token):
    return json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["kid"]


def test_three_rotations_with_now_under_refresh_and_api_load_fail_no_request():
    # A stack of its own: the rotations change the active key, which other
    # files' tests on the shared stack take to be the first one listed.
    stack = Stack(extra_env={"GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s",
                             "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}).start()
    try:
        _rotations_under_load(stack)
    finally:
        stack.remove()


def _rotations_under_load(stack):
    failures, done, kids = [], threading.Event(), set()
    counts = [0] * 4
    ready = threading.Barrier(5, timeout=30)

    def load(index):
        http = client(stack)
        app, code, _ = signed_in_app(stack, http)
        body = app.exchange(code).json()
        ready.wait()
        while not done.is_set():
            refreshed = http.post(stack.issuer + "/token", data={
                "grant_type": "refresh_token", "client_id": app.client_id, "refresh_token": body["refresh_token"]})
            counts[index] += 1
            if refreshed.status_code != 200:
                failures.append(("refresh", refreshed.status_code, refreshed.text[:200]))
                return
            body = refreshed.json()
            kids.add(kid_of(body["access_token"]))
            for api, path in ((stack.api_a, "/api/data"), (stack.api_b, "/api/records")):
                called = http.get(api + path, headers={"Authorization": "Bearer " + body["access_token"]})
                counts[index] += 1
                if called.status_code != 200:
                    failures.append((path, called.status_code, called.text[:200], kid_of(body["access_token"])))

    threads = [threading.Thread(target=load, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    try:
        ready.wait()
        time.sleep(1)
        new_kids = []
        for _ in range(3):
            rotated = stack.ssoctl("keys", "rotate", "--now")
            assert rotated.returncode == 0, rotated.stderr
            new_kids.append(rotated.stdout.split()[-1])  # "active key is now KID"
            time.sleep(ROTATION_SPACING)
        time.sleep(2)
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=30)
    print(f"\nrotation under load: {sum(counts)} requests, {len(failures)} failed, kids seen {len(kids)}, "
          f"failed by path and kid {sorted(Counter((f[0], f[-1][:8]) for f in failures).items())}")
    assert failures == [], failures[:5]
    assert set(new_kids) <= kids, "every rotated key signed tokens during the run"


# Seconds between two `keys rotate --now`. Back to back (under a second
# apart) they fail requests: a resource-server process that refetched its
# JWKS for one new kid refuses the next new kid with 401 unknown_signing_key
# until the next second (JWKSCache: "any refetch at most once per second",
# on whole-second clocks). Measured: 21 and 147 failed api-a calls in two
# runs. Two seconds apart puts each new kid's first token in a later second.
ROTATION_SPACING = float(os.environ.get("GATEHOUSE_RACE_ROTATION_SPACING", "2"))
