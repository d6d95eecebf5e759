"""A home that ran on SQLite, moved to PostgreSQL with `ssoctl migrate`
(a private cluster of the test's own, Debian's binaries, a loopback port).

One stack on SQLite gathers state: users, clients, an API, sessions, a
spent refresh token with its sealed successor, a TOTP enrolment, a passkey,
rotated and retired signing keys. Stopped and pointed at an empty
PostgreSQL database, it refuses to start, names `ssoctl migrate --to`, and
creates nothing there. After the migration the same home starts on
PostgreSQL and is the same issuer: the old password signs in, the SSO
cookie skips the login page, the refresh token from before refreshes (and
a retry of the spent one gets the same successor, which was sealed again
under the master key), the access token from before verifies with the same
kid, TOTP and the passkey sign in, and ssoctl lists the same users, clients,
keys and sessions. Migrating into a database that holds state is refused
and changes nothing; the SQLite file keeps its bytes."""
import base64
import hashlib
import json
import os
import re

import pytest

import database
import pg_cluster
from oidc_flow import App, query
from soft_authenticator import SoftAuthenticator
from stack import Stack
from test_account_security import new_user, post_code, post_password, start, totp

ALICE_PASSWORD = "alice-password-before-the-move"
ENV = {"GATEHOUSE_REFRESH_GRACE": "300", "GATEHOUSE_SWEEP_INTERVAL": "86400", "GATEHOUSE_LOGIN_RATE": "1000r/s",
       "GATEHOUSE_TOKEN_RATE": "1000r/s", "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}
LISTINGS = (("user", "list"), ("client", "list"), ("keys", "list"), ("sessions", "list"), ("api", "list"))


def ok(result):
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def kid_of(jwt):
    header = jwt.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]


def listings(stack):
    return {" ".join(command): json.loads(ok(stack.ssoctl(*command, "--json"))) for command in LISTINGS}


def file_digests(stack):
    """The SQLite file and its write-ahead log (if any): what `migrate` and
    the start-up check only read. (The -shm index is readers' scratch space.)"""
    digests = {}
    for suffix in ("", "-wal"):
        path = os.path.join(stack.home, "gatehouse.sqlite" + suffix)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                digests[suffix or "db"] = hashlib.sha256(handle.read()).hexdigest()
    return digests


def add_passkey(stack, email, password):
    """A signed-in browser adds a software passkey at /account."""
    http, authenticator = stack.session(), SoftAuthenticator()
    app = App(stack, http)
    assert app.login(app.authorize().headers["Location"], email=email, password=password).status_code == 303
    csrf = re.search(r'data-csrf="([A-Za-z0-9_-]+)"', http.get(stack.issuer + "/account").text).group(1)
    options = http.post(stack.issuer + "/account/passkeys/options", data={"csrf": csrf, "current": password})
    assert options.status_code == 200, options.text
    added = http.post(stack.issuer + "/account/passkeys", data={"csrf": csrf, "name": "Phone",
                                                                 **authenticator.create(options.json(), stack.issuer)})
    assert added.status_code == 200, added.text
    return authenticator


class Moved:
    """What the module's one migration leaves for the tests to look at."""


@pytest.fixture(scope="module")
def moved():
    cluster = pg_cluster.new_cluster()
    url = database.create_database(cluster.url)
    stack = Stack(extra_env=ENV)
    # On SQLite, whatever pass this runs in.
    stack.env.pop("GATEHOUSE_DATABASE_URL", None)
    stack.database_url = None
    state = Moved()
    state.stack, state.url = stack, url
    try:
        stack.start()
        ok(stack.ssoctl("user", "passwd", "alice@example.com", "--password-stdin", input=ALICE_PASSWORD + "\n"))
        ok(stack.ssoctl("client", "add", "migrated-app", "--redirect-uri", "myapp:migrated/cb", "--scope", "openid",
                        "--scope", "offline_access"))
        first_kid = json.loads(ok(stack.ssoctl("keys", "list", "--json")))[0]["kid"]
        ok(stack.ssoctl("keys", "rotate", "--now"))
        ok(stack.ssoctl("keys", "retire", first_kid))
        ok(stack.ssoctl("keys", "rotate"))
        state.totp_user = new_user(stack, totp=True)
        passkey_email, passkey_password, _ = new_user(stack)
        state.passkey_user, state.authenticator = passkey_email, add_passkey(stack, passkey_email, passkey_password)

        state.browser = stack.session()
        state.app = App(stack, state.browser)
        login_page = state.app.authorize().headers["Location"]
        tokens = state.app.exchange(state.app.code_from(state.app.login(login_page, password=ALICE_PASSWORD)))
        assert tokens.status_code == 200, tokens.text
        state.tokens = tokens.json()
        rotated = stack.session().post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": "mobile-app-001",
                                                                      "refresh_token": state.tokens["refresh_token"]})
        assert rotated.status_code == 200, rotated.text
        state.successor = rotated.json()["refresh_token"]
        state.jwks_before = stack.session().get(stack.issuer + "/.well-known/jwks.json").json()
        state.listings_before = listings(stack)
        assert stack.stop() == 0

        state.digests_before = file_digests(stack)
        stack.env["GATEHOUSE_DATABASE_URL"] = url
        stack.database_url = url
        with pytest.raises(RuntimeError) as refused:
            stack.start()
        state.refusal = str(refused.value)
        state.tables_after_refusal = database.query(url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
        state.master_key_after_refusal = os.path.exists(os.path.join(stack.home, "keys", "master.key"))

        state.migrated = stack.ssoctl("migrate", "--to", url)
        state.listings_after = listings(stack)
        dump = database.dump(url)
        state.second = stack.ssoctl("migrate", "--to", url)
        state.unchanged_by_second = database.dump(url) == dump
        stack.start()
        yield state
    finally:
        stack.remove()
        cluster.remove()


def test_starting_on_an_empty_postgresql_is_refused_and_creates_nothing_there(moved):
    assert "holds this issuer's state" in moved.refusal, moved.refusal
    assert 'ssoctl migrate --to "$GATEHOUSE_DATABASE_URL"' in moved.refusal
    assert moved.tables_after_refusal == [(0,)], "no schema, no row"
    assert not moved.master_key_after_refusal, "no master key either"


def test_migrate_copies_every_table_and_reports_equal_counts(moved):
    output = ok(moved.migrated)
    counts = {match[0]: (int(match[1]), int(match[2])) for match in re.findall(r"^(\w+)\s+(\d+)\s+(\d+)$", output, re.MULTILINE)}
    tables = {row[0] for row in database.query(moved.url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")}
    assert set(counts) == tables - {"schema_migrations", "issuer_changes"}, output
    assert all(sqlite == postgresql for sqlite, postgresql in counts.values()), output
    for table in ("users", "clients", "sso_sessions", "refresh_tokens", "totp_credentials", "passkeys", "signing_keys"):
        assert counts[table][0] > 0, table
    assert counts["signing_keys"] == (3, 3)
    assert "2 private signing keys sealed under" in output, "the retired key has none"
    keys = os.path.join(moved.stack.home, "keys")
    assert os.stat(os.path.join(keys, "master.key")).st_mode & 0o077 == 0


def test_migrating_into_a_database_that_holds_state_is_refused_and_changes_nothing(moved):
    assert moved.second.returncode == 1
    assert "already holds issuer state" in moved.second.stderr, moved.second.stderr
    assert moved.unchanged_by_second


def test_ssoctl_lists_the_same_users_clients_keys_sessions_and_apis(moved):
    assert moved.listings_after == moved.listings_before
    assert any(client["client_id"] == "migrated-app" for client in moved.listings_after["client list"])
    assert [key["state"] for key in moved.listings_after["keys list"]].count("retired") == 1


def test_the_demo_user_signs_in_with_the_password_from_before_and_the_sso_cookie_still_works(moved):
    stack = moved.stack
    assert "demo user: alice@example.com password:" not in stack.log()[stack.output_start:], "no new demo user"
    app = App(stack, stack.session())
    code = app.code_from(app.login(app.authorize().headers["Location"], password=ALICE_PASSWORD))
    assert app.exchange(code).status_code == 200
    # The browser from before skips the login page: its session moved too.
    again = App(stack, moved.browser).authorize()
    assert again.status_code == 303 and "code=" in again.headers["Location"], again.headers.get("Location")


def test_a_refresh_token_from_before_refreshes_and_a_retry_of_the_spent_one_gets_the_same_successor(moved):
    http, stack = moved.stack.session(), moved.stack

    def refresh(token):
        return http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": "mobile-app-001",
                                                        "refresh_token": token})
    retried = refresh(moved.tokens["refresh_token"])
    assert retried.status_code == 200, retried.text
    assert retried.json()["refresh_token"] == moved.successor, "opened from its sealed copy, sealed again under the master key"
    rotated = refresh(moved.successor)
    assert rotated.status_code == 200, rotated.text
    assert rotated.json()["refresh_token"] != moved.successor


def test_an_access_token_from_before_verifies_with_the_same_keys_and_kid(moved):
    stack, http = moved.stack, moved.stack.session()
    access = moved.tokens["access_token"]
    assert http.get(stack.issuer + "/.well-known/jwks.json").json() == moved.jwks_before
    data = http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + access})
    assert data.status_code == 200, data.text
    assert http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + access}).status_code == 200
    app = App(stack, stack.session())
    fresh = app.exchange(app.code_from(app.login(app.authorize().headers["Location"], password=ALICE_PASSWORD))).json()
    assert kid_of(fresh["access_token"]) == kid_of(access), "the same signing key signs on PostgreSQL"


def test_totp_and_the_passkey_enrolled_before_still_sign_in(moved):
    stack = moved.stack
    email, password, secret = moved.totp_user
    http = stack.session()
    app, login_page = start(stack, http)
    assert post_password(stack, http, login_page, email, password).headers["Location"].startswith("/login-otp.html")
    assert app.code_from(post_code(stack, http, login_page, totp(secret)))

    laptop = stack.session()
    other = App(stack, laptop)
    req = query(other.authorize().headers["Location"])["req"]
    options = laptop.post(stack.issuer + "/login/passkey/options", data={"req": req})
    assert options.status_code == 200, options.text
    signed_in = laptop.post(stack.issuer + "/login/passkey", data={"req": req, **moved.authenticator.get(options.json(), stack.issuer)})
    assert signed_in.status_code == 200, signed_in.text
    assert signed_in.json()["location"].startswith(other.redirect_uri + "?code=")


def test_migrate_help_says_what_it_does(moved):
    text = " ".join(ok(moved.stack.ssoctl("migrate", "--help")).split())
    for phrase in ("--to <URL>", "read-only", "must hold no issuer state", "one", "master.key", "Stop the stack first"):
        assert phrase in text, phrase


def test_the_sqlite_file_keeps_its_bytes(moved):
    """Last: the stack on PostgreSQL has run every test above meanwhile, its
    processes each reading the file at start (the start-up check)."""
    assert file_digests(moved.stack) == moved.digests_before
