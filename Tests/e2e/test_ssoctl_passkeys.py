"""`ssoctl user passkeys EMAIL [--json]` and `--remove CREDENTIAL_ID`
against a running stack, on either backend. The passkeys are inserted
straight into the issuer's database (the registration ceremony is another
file's business): the listing shows each one by its credential id in
base64url, never its key material; a removal deletes exactly that row of
that user and writes one admin_change line; every refusal exits 1, names
the credential id and leaves the database as it was.

Each test makes users of its own (test_account_security's helper), never
touching the shared demo user.
"""
import base64
import json
import os
import secrets
import time

import pytest

from test_account_security import new_user

HEADER = ["CREDENTIAL_ID", "NAME", "ALGORITHM", "CREATED", "LAST_USED", "BACKUP_ELIGIBLE", "BACKUP_STATE"]
PUBLIC_KEY = bytes.fromhex("a501020326200121582065eda5a12577c2bae829437fe338701a10aaa375e1bb5b5de108de439c08551d")


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def ok(stack, *args):
    result = stack.ssoctl(*args)
    assert result.returncode == 0, (args, result.stdout, result.stderr)
    return result.stdout


def user_id(stack, email):
    [(found,)] = stack.query("SELECT id FROM users WHERE email = ?", email)
    return found


def insert_passkey(stack, email, credential_id, name="YubiKey 5C", algorithm=-7, created_at=None, last_used_at=None,
                   backup_eligible=True, backup_state=False):
    """A passkeys row as the registration ceremony would leave it."""
    stack.execute("""
        INSERT INTO passkeys (credential_id, user_id, public_key_cose, algorithm, sign_count, name, aaguid, backup_eligible,
                              backup_state, transports, created_at, last_used_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """, credential_id, user_id(stack, email), PUBLIC_KEY, algorithm, 5, name, bytes(16), int(backup_eligible),
                  int(backup_state), "usb nfc", created_at or int(time.time()), last_used_at)


def stored_ids(stack, email):
    return sorted(bytes(row[0]) for row in stack.query("SELECT credential_id FROM passkeys WHERE user_id = ?", user_id(stack, email)))


def audit_lines(stack):
    path = os.path.join(stack.home, "log", "audit.log")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def credential_id(first=b""):
    """Random credential id bytes holding NUL and 0xFF (identifiers are bytes)."""
    return first + b"\x00\xff" + secrets.token_bytes(16) + b"\x00"


# --- listing -----------------------------------------------------------------------------

def test_a_user_without_passkeys_lists_an_empty_table_and_an_empty_json_array(stack):
    email, _, _ = new_user(stack)
    assert ok(stack, "user", "passkeys", email).split() == HEADER
    assert json.loads(ok(stack, "user", "passkeys", email.upper(), "--json")) == []


def test_passkeys_inserted_directly_are_listed_oldest_first_without_key_material(stack):
    email, _, _ = new_user(stack)
    other, _, _ = new_user(stack)
    older, newer = credential_id(b"\x01"), credential_id(b"\x02")
    insert_passkey(stack, email, newer, name="Pixel 8", algorithm=-8, created_at=1_800_000_100, last_used_at=1_800_000_200,
                   backup_state=True)
    insert_passkey(stack, email, older, name="Office key", algorithm=-257, created_at=1_800_000_000, backup_eligible=False)
    insert_passkey(stack, other, credential_id(b"\x03"), name="Someone else's")

    listed = json.loads(ok(stack, "user", "passkeys", email, "--json"))
    assert listed == [
        {"credential_id": b64url(older), "name": "Office key", "algorithm": "RS256", "created_at": 1_800_000_000,
         "last_used_at": None, "backup_eligible": False, "backup_state": False},
        {"credential_id": b64url(newer), "name": "Pixel 8", "algorithm": "EdDSA", "created_at": 1_800_000_100,
         "last_used_at": 1_800_000_200, "backup_eligible": True, "backup_state": True},
    ]

    table = ok(stack, "user", "passkeys", email).splitlines()
    assert table[0].split() == HEADER and len(table) == 3, table
    assert table[1].split()[0] == b64url(older) and "Office key" in table[1] and "RS256" in table[1], table
    assert table[2].split()[0] == b64url(newer) and "Pixel 8" in table[2] and "EdDSA" in table[2], table
    assert "2027-01-15T08:00:00Z" in table[1], "created, ISO 8601"
    assert "2027-01-15T08:03:20Z" in table[2], "last used"
    everything = "\n".join(table) + json.dumps(listed)
    for secret in (b64url(PUBLIC_KEY), PUBLIC_KEY.hex(), "Someone else's"):
        assert secret not in everything


# --- removal -----------------------------------------------------------------------------

def test_removing_a_passkey_deletes_that_row_only_and_is_audited(stack):
    email, _, _ = new_user(stack)
    # 0xF8: its base64url begins with "-", still taken as the value.
    doomed, kept = credential_id(b"\xf8"), credential_id(b"\x10")
    assert b64url(doomed).startswith("-")
    insert_passkey(stack, email, doomed, name="Lost phone")
    insert_passkey(stack, email, kept, name="Laptop")
    audited = len(audit_lines(stack))

    result = stack.ssoctl("user", "passkeys", email, "--remove", b64url(doomed))
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert result.stdout.strip() == f'removed passkey {b64url(doomed)} ("Lost phone") of {email}'
    assert stored_ids(stack, email) == [kept], "that passkey only, exactly its bytes"
    assert [entry["credential_id"] for entry in json.loads(ok(stack, "user", "passkeys", email, "--json"))] == [b64url(kept)]

    added = [json.loads(line) for line in audit_lines(stack)[audited:]]
    changes = [line for line in added if line.get("event") == "admin_change"]
    assert len(changes) == 1, added
    assert changes[0]["reason"] == "user passkeys remove" and changes[0]["target"] == email and changes[0]["user"] == email, changes

    again = stack.ssoctl("user", "passkeys", email, "--remove", b64url(doomed))
    assert again.returncode == 1 and b64url(doomed) in again.stderr, "removed once"


@pytest.mark.parametrize("case", ["unknown", "another user's", "a prefix of one", "not base64url", "unknown user"])
def test_a_refused_removal_exits_1_names_the_id_and_changes_nothing(stack, case):
    email, _, _ = new_user(stack)
    other, _, _ = new_user(stack)
    mine, theirs = credential_id(b"\x20"), credential_id(b"\x21")
    insert_passkey(stack, email, mine)
    insert_passkey(stack, other, theirs)
    target, named = {
        "unknown": (email, b64url(credential_id(b"\x22"))),
        "another user's": (email, b64url(theirs)),
        "a prefix of one": (email, b64url(mine[:-1])),
        "not base64url": (email, "not*base64url"),
        "unknown user": ("nobody-" + secrets.token_hex(4) + "@example.com", b64url(mine)),
    }[case]
    before = stack.database_dump()
    audited = len(audit_lines(stack))

    result = stack.ssoctl("user", "passkeys", target, "--remove", named)
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert result.stderr.startswith("ssoctl: error: "), result.stderr
    assert (target if case == "unknown user" else named) in result.stderr, result.stderr
    assert result.stdout == ""
    assert stack.database_dump() == before
    assert [line for line in audit_lines(stack)[audited:] if '"admin_change"' in line] == [], "a refusal writes no admin_change"
    assert stored_ids(stack, email) == [mine] and stored_ids(stack, other) == [theirs]


def test_json_and_remove_together_are_a_usage_error_that_changes_nothing(stack):
    email, _, _ = new_user(stack)
    mine = credential_id(b"\x30")
    insert_passkey(stack, email, mine)
    before = stack.database_dump()
    result = stack.ssoctl("user", "passkeys", email, "--json", "--remove", b64url(mine))
    assert result.returncode not in (0, 1) and "--json" in result.stderr, (result.returncode, result.stderr)
    assert stack.database_dump() == before


def test_user_delete_erases_the_passkeys_and_says_how_many(stack):
    email, _, _ = new_user(stack)
    insert_passkey(stack, email, credential_id(b"\x40"))
    insert_passkey(stack, email, credential_id(b"\x41"))
    uid = user_id(stack, email)
    deleted = ok(stack, "user", "delete", email)
    assert "2 passkey(s)" in deleted, deleted
    assert stack.query("SELECT count(*) FROM passkeys WHERE user_id = ?", uid) == [(0,)]


def test_the_passkeys_command_has_help(stack):
    result = stack.ssoctl("user", "passkeys", "--help")
    assert result.returncode == 0 and "USAGE" in result.stdout.upper()
    assert "--remove" in result.stdout and "--json" in result.stdout and "base64url" in result.stdout
    assert "passkeys" in stack.ssoctl("user", "--help").stdout


def test_passwd_keeps_passkeys_and_totp_unless_told_to_remove_them(stack):
    """A compromised account: whoever held it may have added a passkey or
    their own authenticator app. `user passwd` keeps both by default (a
    forgotten password); --remove-passkeys and --remove-totp take them in
    the same transaction, and the audit line says so."""
    email, _, _ = new_user(stack)
    other, _, _ = new_user(stack)
    for index in range(2):
        insert_passkey(stack, email, credential_id(bytes([0x50 + index])))
    insert_passkey(stack, other, credential_id(b"\x60"))
    assert ok(stack, "user", "totp", email).startswith("otpauth://")
    uid = user_id(stack, email)

    def totp_rows():
        return stack.query("SELECT count(*) FROM totp_credentials WHERE user_id = ?", uid)[0][0]

    kept = stack.ssoctl("user", "passwd", email, "--password-stdin", input="a fresh long password 1\n")
    assert kept.returncode == 0 and "removed" not in kept.stdout, kept.stdout
    assert len(stored_ids(stack, email)) == 2 and totp_rows() == 1

    audited = len(audit_lines(stack))
    cleaned = stack.ssoctl("user", "passwd", email, "--password-stdin", "--remove-passkeys", "--remove-totp",
                           input="a fresh long password 2\n")
    assert cleaned.returncode == 0, cleaned.stderr
    assert cleaned.stdout.strip().endswith("removed 2 passkey(s); removed TOTP"), cleaned.stdout
    assert stored_ids(stack, email) == [] and totp_rows() == 0
    assert len(stored_ids(stack, other)) == 1, "another user's passkey stays"
    [line] = [json.loads(line) for line in audit_lines(stack)[audited:] if '"admin_change"' in line]
    assert line["reason"] == "user passwd --remove passkeys,totp" and line["target"] == email
    assert "--remove-passkeys" in stack.ssoctl("user", "passwd", "--help").stdout
