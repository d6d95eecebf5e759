"""User administration through ssoctl against a running stack, checked over
HTTP: `user enable`, `user unlock`, `user update`, `user totp --remove`,
`user delete`, and `--json` on `user list`, `keys list`, `sessions list`.
Every change reaches the running responders at once (no restart), and
every refusal exits 1, names the bad value and leaves the database as it was.

Each test makes users of its own and talks from a loopback address of its
own (the helpers of test_account_security.py), never as the shared demo user.
"""
import base64
import hashlib
import json
import secrets

import pytest

from oidc_flow import App, query
from test_account_security import (ACCOUNT_LIMIT, client, error_of, fresh_address, new_user, post_code, post_password, sign_in,
                                   start, totp)


def claims(jwt):
    payload = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def ok(stack, *args, input=None):
    result = stack.ssoctl(*args, input=input)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def listed_users(stack):
    return {user["email"]: user for user in json.loads(ok(stack, "user", "list", "--json"))}


def signed_in_tokens(stack, email, password):
    http = client(stack, fresh_address())
    app, code = sign_in(stack, http, email, password)
    tokens = app.exchange(code)
    assert tokens.status_code == 200, tokens.text
    return http, app, tokens.json()


def userinfo(stack, http, access_token):
    return http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + access_token})


def refresh(stack, http, app, refresh_token):
    return http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                                    "client_id": app.client_id})


def throttle_key(text):
    """LoginThrottle's keys: SHA-256 of what is counted."""
    return hashlib.sha256(text.encode()).digest()


# --- enable ----------------------------------------------------------------------------

def test_disable_then_enable_lets_the_user_sign_in_again(stack):
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    assert sign_in(stack, http, email, password)[1]
    assert "disabled" in ok(stack, "user", "disable", email)
    other = client(stack, fresh_address())
    _, login_page = start(stack, other)
    assert error_of(post_password(stack, other, login_page, email, password)) == "invalid_credentials"
    assert listed_users(stack)[email]["disabled"] is True

    assert ok(stack, "user", "enable", email.upper()).strip() == f"enabled {email}"
    assert listed_users(stack)[email]["disabled"] is False
    assert sign_in(stack, client(stack, fresh_address()), email, password)[1], "at once, no restart"
    assert "was not disabled" in ok(stack, "user", "enable", email)


# --- unlock ----------------------------------------------------------------------------

def test_a_locked_account_is_unlocked_and_signs_in_at_once(stack):
    email, password, _ = new_user(stack)
    address = fresh_address()
    http = client(stack, address)
    app, login_page = start(stack, http)
    for _ in range(ACCOUNT_LIMIT):
        assert error_of(post_password(stack, http, login_page, email, "wrong " + password)) == "invalid_credentials"
    assert error_of(post_password(stack, http, login_page, email, password)) == "too_many_attempts"

    user_id = stack.query("SELECT id FROM users WHERE email = ?", email)[0][0]
    account_key, address_key = throttle_key(f"account\0user\0{user_id}"), throttle_key(f"address\0{address}")
    counter = "SELECT failures, locked_until FROM login_throttle WHERE key_hash = ?"
    assert stack.query(counter, account_key)[0][1] > 0, "the account is locked"
    address_before = stack.query(counter, address_key)
    assert address_before and address_before[0][0] == ACCOUNT_LIMIT

    unlocked = ok(stack, "user", "unlock", email)
    assert unlocked.startswith(f"unlocked {email}"), unlocked
    assert stack.query(counter, account_key) == []
    assert stack.query(counter, address_key) == address_before, "per-address counters are not touched"
    assert app.code_from(post_password(stack, http, login_page, email, password)), "signs in at once"
    assert "was not locked" in ok(stack, "user", "unlock", email)


# --- update ----------------------------------------------------------------------------

def test_update_changes_the_name_and_roles_of_the_next_sign_in(stack):
    email, password, _ = new_user(stack)
    _, _, before = signed_in_tokens(stack, email, password)
    assert claims(before["access_token"])["roles"] == ["user"]

    updated = ok(stack, "user", "update", email, "--name", "Renée Admin", "--role", "admin", "--role", "auditor")
    assert updated.strip() == f'updated {email}: name "Renée Admin", roles admin,auditor'
    http, _, after = signed_in_tokens(stack, email, password)
    assert claims(after["id_token"])["name"] == "Renée Admin"
    assert claims(after["access_token"])["roles"] == ["admin", "auditor"]
    answer = userinfo(stack, http, after["access_token"])
    assert answer.status_code == 200 and answer.json()["name"] == "Renée Admin"
    listed = listed_users(stack)[email]
    assert listed["name"] == "Renée Admin" and listed["roles"] == ["admin", "auditor"]

    ok(stack, "user", "update", email, "--role", "user")
    assert listed_users(stack)[email]["name"] == "Renée Admin", "roles alone keep the name"


# --- totp --remove --------------------------------------------------------------------

def test_totp_remove_lets_a_totp_user_sign_in_with_the_password_only(stack):
    email, password, secret = new_user(stack, totp=True)
    http = client(stack, fresh_address())
    app, login_page = start(stack, http)
    asked = post_password(stack, http, login_page, email, password)
    assert asked.headers["Location"].startswith("/login-otp.html?req="), "a code is asked"

    removed = ok(stack, "user", "totp", email, "--remove")
    assert "the next sign-in asks for the password only" in removed
    user_id = stack.query("SELECT id FROM users WHERE email = ?", email)[0][0]
    assert stack.query("SELECT count(*) FROM totp_credentials WHERE user_id = ?", user_id) == [(0,)]
    assert error_of(post_code(stack, http, login_page, totp(secret))) == "expired", "the old seed signs nobody in"
    fresh = client(stack, fresh_address())
    app, code = sign_in(stack, fresh, email, password)
    tokens = app.exchange(code).json()
    assert claims(tokens["id_token"])["amr"] == ["pwd"]
    assert "has no TOTP enrolment" in ok(stack, "user", "totp", email, "--remove")


# --- delete ------------------------------------------------------------------------------

def test_delete_erases_the_user_and_running_responders_refuse_its_tokens_at_once(stack):
    email, password, _ = new_user(stack, totp=False)
    http, app, tokens = signed_in_tokens(stack, email, password)
    assert userinfo(stack, http, tokens["access_token"]).status_code == 200
    service, service_secret = f"introspector-{secrets.token_hex(4)}", secrets.token_urlsafe(24)
    ok(stack, "client", "add", service, "--redirect-uri", "https://rs.example/cb", "--secret-stdin", input=service_secret + "\n")
    old = listed_users(stack)[email]
    user_id = stack.query("SELECT id FROM users WHERE email = ?", email)[0][0]
    bystander_email, bystander_password, _ = new_user(stack)
    bystander_http, bystander_app, bystander = signed_in_tokens(stack, bystander_email, bystander_password)

    deleted = ok(stack, "user", "delete", email)
    assert deleted.startswith(f"deleted user {email} (sub {old['sub']})"), deleted
    assert "1 refresh token(s)" in deleted

    # The running responders, not restarted.
    refused = refresh(stack, http, app, tokens["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    answer = userinfo(stack, http, tokens["access_token"])
    assert answer.status_code == 401
    assert 'error="invalid_token"' in answer.headers["WWW-Authenticate"]
    for token in (tokens["access_token"], tokens["refresh_token"]):
        introspected = http.post(stack.issuer + "/introspect", data={"token": token}, auth=(service, service_secret))
        assert introspected.status_code == 200 and introspected.json() == {"active": False}
    assert App(stack, http).authorize().headers["Location"].startswith("/login.html?"), "the SSO cookie no longer skips the login"

    assert email not in listed_users(stack)
    for table in ("sso_sessions", "refresh_tokens", "device_secrets", "authorization_codes", "totp_credentials"):
        assert stack.query(f"SELECT count(*) FROM {table} WHERE user_id = ?", user_id) == [(0,)], table
    assert stack.query("SELECT count(*) FROM login_throttle WHERE key_hash = ?", throttle_key(f"account\0user\0{user_id}")) == [(0,)]

    # Others keep everything.
    assert userinfo(stack, bystander_http, bystander["access_token"]).status_code == 200
    assert refresh(stack, bystander_http, bystander_app, bystander["refresh_token"]).status_code == 200

    # The address again: a new account with a new sub and none of the old tokens.
    ok(stack, "user", "add", email, "--name", "Someone Else", "--password-stdin", input="another password entirely\n")
    again = listed_users(stack)[email]
    assert again["sub"] != old["sub"]
    assert userinfo(stack, http, tokens["access_token"]).status_code == 401
    assert refresh(stack, http, app, tokens["refresh_token"]).json()["error"] == "invalid_grant"
    _, _, fresh = signed_in_tokens(stack, email, "another password entirely")
    assert claims(fresh["access_token"])["sub"] == again["sub"]


# --- --json ------------------------------------------------------------------------------

def test_list_commands_print_json_arrays_without_secrets(stack):
    email, password, _ = new_user(stack)
    http, _, _ = signed_in_tokens(stack, email, password)
    cookie = http.cookies["sso_session"]

    users = json.loads(ok(stack, "user", "list", "--json"))
    assert isinstance(users, list) and users
    assert all(set(user) == {"email", "name", "roles", "disabled", "sub", "email_verified", "invitation_pending"} for user in users)
    assert [user["email"] for user in users] == sorted((user["email"] for user in users), key=str.lower)
    mine = [user for user in users if user["email"] == email][0]
    assert mine["roles"] == ["user"] and mine["disabled"] is False and mine["name"] == "Security Test"
    # `ssoctl user add` accounts are verified and have a password.
    assert mine["email_verified"] is True and mine["invitation_pending"] is False

    keys = json.loads(ok(stack, "keys", "list", "--json"))
    assert keys and all(set(key) == {"kid", "alg", "state", "created_at", "activates_at", "retired_at"} for key in keys)
    # One active key per algorithm (ES256 and EdDSA ones if another test made them).
    assert [(key["alg"], key["state"]) for key in keys].count(("RS256", "active")) == 1
    assert all(isinstance(key["created_at"], int) for key in keys)
    active = [key["kid"] for key in keys if key["state"] == "active" and key["alg"] == "RS256"][0]
    assert active in {key["kid"] for key in http.get(stack.issuer + "/.well-known/jwks.json").json()["keys"]}

    sessions = json.loads(ok(stack, "sessions", "list", email, "--json"))
    assert len(sessions) == 1
    session = sessions[0]
    assert set(session) == {"sid", "email", "state", "amr", "auth_time", "created_at", "expires_at", "ended_at"}
    assert session["email"] == email and session["state"] == "active" and session["amr"] == ["pwd"]
    assert session["ended_at"] is None
    assert session["sid"] in [entry["sid"] for entry in json.loads(ok(stack, "sessions", "list", "--json"))]

    everything = [ok(stack, *command, "--json") for command in (["user", "list"], ["keys", "list"], ["sessions", "list"])]
    assert not any(cookie in text or "scrypt" in text or "BEGIN" in text for text in everything), "no secret, hash or key"
    names = {name for text in everything for entry in json.loads(text) for name in entry}
    assert not any("hash" in name or "secret" in name or "password" in name for name in names), names


# --- refusals ------------------------------------------------------------------------------

@pytest.mark.parametrize("args,named", [
    (["user", "enable", "nobody@example.com"], "no user with email nobody@example.com"),
    (["user", "unlock", "nobody@example.com"], "no user with email nobody@example.com"),
    (["user", "update", "nobody@example.com", "--name", "X"], "no user with email nobody@example.com"),
    (["user", "totp", "nobody@example.com", "--remove"], "no user with email nobody@example.com"),
    (["user", "delete", "nobody@example.com"], "no user with email nobody@example.com"),
    (["user", "delete", "alice@example.co"], "no user with email alice@example.co"),
    (["user", "delete", "alice@example.com\x01"], '"alice@example.com\\u{01}" contains a control character'),
    (["user", "unlock", "alice@example.com\n"], '"alice@example.com\\n" contains a control character'),
    (["user", "enable", "\x7falice@example.com"], '"\\u{7F}alice@example.com" contains a control character'),
    (["user", "update", "alice@example.com\x1b", "--role", "admin"], '"alice@example.com\\u{1B}" contains a control character'),
    (["user", "totp", "alice@example.com\t", "--remove"], '"alice@example.com\\t" contains a control character'),
    (["user", "totp", "alice@example.com\x02"], '"alice@example.com\\u{02}" contains a control character'),
    (["sessions", "list", "alice@example.com\x01", "--json"], '"alice@example.com\\u{01}" contains a control character'),
    (["user", "update", "alice@example.com"], "nothing to change for alice@example.com"),
    (["user", "update", "alice@example.com", "--role", "bad role"], '"bad role"'),
    (["user", "update", "alice@example.com", "--name", "   "], "the name must be"),
])
def test_refusals_exit_1_name_the_value_and_change_nothing(stack, args, named):
    before = stack.database_dump()
    result = stack.ssoctl(*args)
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.startswith("ssoctl: error: "), result.stderr
    assert named in result.stderr, result.stderr
    assert result.stdout == ""
    assert stack.database_dump() == before


def test_every_new_command_has_help(stack):
    for command in (["user", "enable"], ["user", "unlock"], ["user", "update"], ["user", "delete"], ["user", "totp"],
                    ["user", "list"], ["keys", "list"], ["sessions", "list"]):
        result = stack.ssoctl(*command, "--help")
        assert result.returncode == 0, command
        assert "USAGE" in result.stdout.upper(), command
    assert "--remove" in stack.ssoctl("user", "totp", "--help").stdout
    assert "--json" in stack.ssoctl("user", "list", "--help").stdout
