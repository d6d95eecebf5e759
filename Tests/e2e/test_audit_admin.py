"""ssoctl's audit trail: every command that changes users, clients, APIs,
keys or sessions writes one `admin_change` line to <home>/log/audit.log,
naming the operating-system user who ran it (`actor`: $SUDO_USER under
sudo) and what it acted on, never a password or secret; a refused command
and a read-only one write nothing.

A stack of its own: each test counts the lines its command adds, so no other
file's sign-ins may land in between. The responders write their own events
(sign-ins, locks) just after they answer, so a test that signs in first
waits for that line before it counts."""
import json
import os
import pwd
import re
import secrets
import stat
import subprocess
import time

import pytest

from stack import Stack
from test_account_security import ACCOUNT_LIMIT, client, error_of, fresh_address, new_user, post_password, sign_in, start

# Who runs the tests runs ssoctl: root in Scripts/test's container.
ACTOR = pwd.getpwuid(os.getuid()).pw_name
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
FIELDS = {"time", "event", "user", "client", "ip", "reason", "sid", "actor", "target"}
# Every password and client secret this file gives ssoctl, for the last look at the whole file.
GIVEN = []


@pytest.fixture(scope="module")
def stack():
    running = Stack(extra_env={"GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s",
                               "GATEHOUSE_AUTHORIZE_RATE": "1000r/s", "GATEHOUSE_SWEEP_INTERVAL": "86400"})
    # The actor must be the test's own user, whoever started the suite through sudo.
    running.env.pop("SUDO_USER", None)
    running.start()
    yield running
    running.remove()


# --- helpers ---------------------------------------------------------------------------

def audit_path(stack):
    return os.path.join(stack.home, "log", "audit.log")


def audit_text(stack):
    with open(audit_path(stack), encoding="utf-8") as handle:
        return handle.read()


def audit_lines(stack):
    return [json.loads(line) for line in audit_text(stack).splitlines()]


def wait_for_line(stack, **fields):
    """Waits for a responder's line (written just after it answered)."""
    deadline = time.time() + 5
    while time.time() < deadline:
        if any(all(line.get(key) == value for key, value in fields.items()) for line in audit_lines(stack)):
            return
        time.sleep(0.05)
    raise AssertionError(f"no audit line with {fields}")


def run(stack, *args, input=None, expect=0, environment=None):
    """Runs ssoctl, with `environment` added to the stack's (which
    stack.ssoctl cannot take); returns its result and the audit lines it
    added, raw."""
    before = len(audit_text(stack).splitlines())
    result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "ssoctl"), *args], env=dict(stack.env, **(environment or {})),
                            input=input, capture_output=True, text=True, timeout=60)
    assert result.returncode == expect, (args, result.stdout, result.stderr)
    return result, audit_text(stack).splitlines()[before:]


def changed(stack, *args, input=None, secrets_given=()):
    """Runs a changing command; returns its output and the one line it added,
    after checking that the line holds none of what was given on stdin."""
    result, raw = run(stack, *args, input=input)
    assert len(raw) == 1, (args, raw)
    for secret in secrets_given:
        assert secret not in raw[0], (args, raw)
    return result.stdout, json.loads(raw[0])


def assert_admin_change(line, reason, target, user=None, client=None):
    assert set(line) == FIELDS, line
    assert line["event"] == "admin_change" and line["reason"] == reason and line["target"] == target, line
    assert line.get("user") == user and line.get("client") == client, line
    assert line["actor"] == ACTOR, line
    assert TIME.fullmatch(line["time"]), line
    # A command on the host has no address: ip is null, as the contract says.
    assert line["ip"] is None and line["sid"] is None, line


def given(prefix):
    """A fresh password or secret, remembered so that no line may ever hold it."""
    value = prefix + secrets.token_urlsafe(18)
    GIVEN.append(value)
    return value


def fresh_email():
    return f"audit-{secrets.token_hex(5)}@example.com"


def fresh_client_id():
    return f"audit-app-{secrets.token_hex(4)}"


# --- changes ---------------------------------------------------------------------------

def test_user_add_writes_one_line_with_the_actor_and_never_the_password(stack):
    email, password = fresh_email(), given("pw-")
    _, line = changed(stack, "user", "add", email, "--name", "Audit Test", "--password-stdin", input=password + "\n",
                      secrets_given=[password])
    assert_admin_change(line, "user add", email, user=email)


def test_user_passwd_and_totp_name_the_account_but_not_the_password_or_seed(stack):
    email, _, _ = new_user(stack)
    password = given("pw-")
    _, line = changed(stack, "user", "passwd", email, "--password-stdin", input=password + "\n", secrets_given=[password])
    assert_admin_change(line, "user passwd", email, user=email)

    uri, line = changed(stack, "user", "totp", email)
    seed = re.search(r"secret=([A-Z2-7]+)", uri).group(1)
    assert seed not in json.dumps(line) and "otpauth" not in json.dumps(line)
    assert_admin_change(line, "user totp", email, user=email)
    _, line = changed(stack, "user", "totp", email, "--remove")
    assert_admin_change(line, "user totp remove", email, user=email)


def test_user_update_disable_enable_and_delete_name_the_canonical_email(stack):
    email, _, _ = new_user(stack)
    for args, reason in ((["update", email.upper(), "--name", "Renamed"], "user update"), (["disable", email], "user disable"),
                         (["enable", email], "user enable"), (["delete", email], "user delete")):
        _, line = changed(stack, "user", *args)
        assert_admin_change(line, reason, email, user=email)


def test_user_unlock_writes_its_admin_change_and_account_unlocked_only_for_a_real_lock(stack):
    email, password, _ = new_user(stack)
    # Not locked: the failure count starts afresh, one line.
    _, line = changed(stack, "user", "unlock", email.upper())
    assert_admin_change(line, "user unlock", email, user=email)

    http = client(stack, fresh_address())
    _, login_page = start(stack, http)
    for _ in range(ACCOUNT_LIMIT):
        assert error_of(post_password(stack, http, login_page, email, "wrong " + password)) == "invalid_credentials"
    wait_for_line(stack, event="account_locked", user=email)

    _, raw = run(stack, "user", "unlock", email)
    first, second = (json.loads(text) for text in raw)
    assert_admin_change(first, "user unlock", email, user=email)
    assert second == {"event": "account_unlocked", "user": email, "reason": "user unlock", "actor": ACTOR,
                      "time": second["time"], "client": None, "ip": None, "sid": None, "target": None}


def test_client_add_secret_and_delete_name_the_client_and_never_its_secret(stack):
    client_id, secret, new_secret = fresh_client_id(), given("s-"), given("s-")
    _, line = changed(stack, "client", "add", client_id, "--redirect-uri", "https://rp.example.test/cb", "--secret-stdin",
                      input=secret + "\n", secrets_given=[secret])
    assert_admin_change(line, "client add", client_id, client=client_id)

    _, line = changed(stack, "client", "secret", client_id, "--secret-stdin", input=new_secret + "\n", secrets_given=[new_secret])
    assert_admin_change(line, "client secret", client_id, client=client_id)
    _, line = changed(stack, "client", "update", client_id, "--add-scope", "profile")
    assert_admin_change(line, "client update", client_id, client=client_id)
    _, line = changed(stack, "client", "delete", client_id)
    assert_admin_change(line, "client delete", client_id, client=client_id)


def test_a_native_sso_group_switch_is_audited_and_showing_it_is_not(stack):
    _, line = changed(stack, "client", "group", "demo", "--no-allow-device-id")
    assert_admin_change(line, "client group no-allow-device-id", "demo")
    _, line = changed(stack, "client", "group", "demo", "--allow-device-id")
    assert_admin_change(line, "client group allow-device-id", "demo")
    assert run(stack, "client", "group", "demo")[1] == []


def test_api_add_and_remove_name_the_audience(stack):
    audience, scope = f"https://audit-{secrets.token_hex(4)}.example.test", f"audit{secrets.token_hex(3)}:read"
    _, line = changed(stack, "api", "add", audience, "--scope", scope)
    assert_admin_change(line, "api add", audience)
    _, line = changed(stack, "api", "remove", audience)
    assert_admin_change(line, "api remove", audience)


def test_keys_rotate_and_retire_name_the_kid_and_an_emergency_rotation_says_so(stack):
    output, line = changed(stack, "keys", "rotate")
    kid = re.match(r"published (\S+)", output).group(1)
    assert_admin_change(line, "keys rotate", kid)
    assert kid in [key["kid"] for key in json.loads(stack.ssoctl("keys", "list", "--json").stdout)]
    _, line = changed(stack, "keys", "retire", kid)
    assert_admin_change(line, "keys retire", kid)

    output, line = changed(stack, "keys", "rotate", "--now")
    assert_admin_change(line, "keys rotate now", re.search(r"^active key is now (\S+)$", output, re.MULTILINE).group(1))


def test_sessions_revoke_names_the_sid_and_its_user(stack):
    email, password, _ = new_user(stack)
    assert sign_in(stack, client(stack, fresh_address()), email, password)[1]
    wait_for_line(stack, event="login_success", user=email)
    [session] = json.loads(stack.ssoctl("sessions", "list", email, "--json").stdout)

    _, line = changed(stack, "sessions", "revoke", session["sid"])
    assert_admin_change(line, "sessions revoke", session["sid"], user=email)


def test_sudo_user_is_the_actor_when_root_was_reached_through_sudo(stack):
    if os.getuid() != 0:
        pytest.skip("ssoctl believes SUDO_USER only when it runs as root")
    email, _, _ = new_user(stack)
    _, raw = run(stack, "user", "disable", email, environment={"SUDO_USER": "audit-operator"})
    [line] = [json.loads(text) for text in raw]
    assert line["actor"] == "audit-operator" and line["reason"] == "user disable" and line["user"] == email, line


def test_setup_writes_a_line_only_when_it_created_something(stack):
    assert run(stack, "setup", "--demo")[1] == [], "every start runs setup; one that creates nothing is no change"
    changed(stack, "client", "delete", "mobile-app-002")
    _, line = changed(stack, "setup", "--demo")
    assert_admin_change(line, "setup", "client mobile-app-002")


# --- no change, no line ----------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["client", "add", "audit-unknown-scope", "--redirect-uri", "https://rp.example.test/cb", "--scope", "nope:read"],
    ["user", "add", "alice@example.com", "--name", "Again", "--password-stdin"],
    ["user", "unlock", "nobody-here@example.com"],
    ["user", "delete", "nobody-here@example.com"],
    ["client", "delete", "no-such-client"],
    ["client", "group", "not a group name", "--allow-device-id"],
    ["api", "remove", "https://no-such-api.example.test"],
    ["keys", "retire", "no-such-kid"],
    ["sessions", "revoke", "no-such-sid"],
])
def test_a_refused_command_writes_no_line(stack, args):
    result, raw = run(stack, *args, input=given("pw-") + "\n", expect=1)
    assert result.stderr.startswith("ssoctl: error: "), result.stderr
    assert raw == []


@pytest.mark.parametrize("args", [
    ["user", "list", "--json"], ["client", "list"], ["api", "list"], ["keys", "list"], ["sessions", "list"], ["stats"],
    ["sweep"], ["user", "enable", "alice@example.com"],
])
def test_read_only_commands_housekeeping_and_no_ops_write_no_line(stack, args):
    result, raw = run(stack, *args)
    assert raw == [] and result.stderr == "", (raw, result.stderr)


# --- the file ----------------------------------------------------------------------------

def test_the_audit_log_is_the_owner_s_alone_and_holds_no_given_secret(stack):
    assert stat.S_IMODE(os.stat(audit_path(stack)).st_mode) == 0o600
    # Every event carries the same fields, null where they do not apply
    # (sign-ins from responders and admin changes from ssoctl alike).
    events = audit_lines(stack)
    assert {line["event"] for line in events} >= {"admin_change", "login_success"}, events
    for line in events:
        assert set(line) == FIELDS, line
    text = audit_text(stack)
    assert GIVEN and not [value for value in GIVEN if value in text]
    assert "otpauth" not in text and "secret=" not in text


def test_ssoctl_creates_an_audit_log_of_its_own_0600(stack, tmp_path):
    path = tmp_path / "audit.log"
    run(stack, "user", "add", fresh_email(), "--name", "Elsewhere", "--password-stdin", input=given("pw-") + "\n",
        environment={"GATEHOUSE_AUDIT_LOG": str(path)})
    info = os.stat(path)
    assert stat.S_IMODE(info.st_mode) == 0o600
    # Opened before ssoctl became the home's owner (gatehouse, when root runs the tests).
    assert info.st_uid == os.getuid()
    [line] = [json.loads(text) for text in path.read_text().splitlines()]
    assert line["reason"] == "user add" and line["actor"] == ACTOR


def test_an_audit_log_that_cannot_be_opened_warns_once_on_a_change_only(stack, tmp_path):
    nowhere = {"GATEHOUSE_AUDIT_LOG": str(tmp_path / "missing" / "audit.log")}
    listed, _ = run(stack, "user", "list", environment=nowhere)
    assert listed.stderr == "", "a read-only command has nothing to audit: no warning"
    email = fresh_email()
    added, raw = run(stack, "user", "add", email, "--name", "Unaudited", "--password-stdin", input=given("pw-") + "\n",
                     environment=nowhere)
    assert raw == [], raw
    warning, event = added.stderr.splitlines()
    assert warning.startswith("ssoctl: warning: cannot open " + nowhere["GATEHOUSE_AUDIT_LOG"]), warning
    assert json.loads(event)["target"] == email, "the event falls back to standard error"
