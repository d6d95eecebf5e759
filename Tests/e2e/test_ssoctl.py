"""ssoctl against a live stack: bad input changes nothing; good input takes effect."""
import secrets

import pytest


@pytest.mark.parametrize("args,stdin", [
    (["user", "add", "alice@example.com", "--name", "Dup", "--password-stdin"], "long enough\n"),
    (["user", "add", "new@example.com", "--name", "New", "--password-stdin"], "\n"),
    (["user", "add", "not-an-email", "--name", "New", "--password-stdin"], "long enough\n"),
    (["user", "passwd", "nobody@example.com", "--password-stdin"], "long enough\n"),
    (["user", "disable", "nobody@example.com"], None),
    (["client", "add", "mobile-app-001", "--redirect-uri", "myapp:cb"], None),
    (["client", "add", "new-app", "--redirect-uri", "not a uri"], None),
    (["client", "add", "new-app", "--redirect-uri", "http://evil.example/cb"], None),
    (["client", "add", "new-app", "--redirect-uri", "javascript:alert(1)"], None),
    (["client", "add", "new-app"], None),
    (["keys", "retire", "no-such-kid"], None),
])
def test_bad_input_is_refused_and_changes_nothing(stack, args, stdin):
    before = stack.database_dump()
    result = stack.ssoctl(*args, input=stdin)
    assert result.returncode != 0
    assert result.stderr.startswith("ssoctl: error: ") or "Error:" in result.stderr
    assert stack.database_dump() == before


def test_user_and_client_commands_work(stack):
    added = stack.ssoctl("user", "add", "bob@example.com", "--name", "Bob Stone", "--password-stdin", "--role", "admin",
                         input="correct horse battery\n")
    assert added.returncode == 0, added.stderr
    listing = stack.ssoctl("user", "list").stdout
    assert "bob@example.com" in listing and "Bob Stone" in listing and "admin" in listing
    assert stack.ssoctl("user", "passwd", "bob@example.com", "--password-stdin", input="another long one\n").returncode == 0
    assert stack.ssoctl("user", "disable", "bob@example.com").returncode == 0
    assert "disabled" in [line for line in stack.ssoctl("user", "list").stdout.splitlines() if "bob@" in line][0]
    client = stack.ssoctl("client", "add", "partner-app", "--redirect-uri", "com.partner.app:/cb", "--scope", "openid")
    assert client.returncode == 0, client.stderr
    assert "partner-app" in stack.ssoctl("client", "list").stdout
    for command in (["--help"], ["user", "--help"], ["client", "add", "--help"], ["keys", "rotate", "--help"]):
        assert stack.ssoctl(*command).returncode == 0


def test_a_kid_or_sid_that_begins_with_a_dash_is_taken_as_the_value(stack):
    """kids and sids are base64url: one in 64 begins with "-", which an
    argument parser would take for an unknown option (exit 64, a usage
    error) and so refuse to retire that key or end that session."""
    for args, said in [(["keys", "retire", "-no-such-kid"], "no key with kid -no-such-kid"),
                       (["sessions", "revoke", "-no-such-sid"], 'no session with sid "-no-such-sid"')]:
        result = stack.ssoctl(*args)
        assert result.returncode == 1, result.stderr
        assert said in result.stderr
    assert stack.ssoctl("keys", "retire", "a", "b").returncode == 64, "still exactly one"


def test_a_double_dash_ends_the_options_before_a_kid_or_sid(stack):
    """POSIX utility guideline 10: `--` ends the options, whatever follows;
    it used to be counted as a second kid or sid ("name exactly one")."""
    for args, said in [(["keys", "retire", "--", "-no-such-kid"], "no key with kid -no-such-kid"),
                       (["sessions", "revoke", "--", "-no-such-sid"], 'no session with sid "-no-such-sid"'),
                       (["sessions", "revoke", "--", "--"], 'no session with sid "--"')]:
        result = stack.ssoctl(*args)
        assert result.returncode == 1 and said in result.stderr, (args, result.stderr)
    sid = secrets.token_urlsafe(16)
    assert stack.ssoctl("sessions", "revoke", "--").returncode == 64, "-- alone names no sid"
    assert stack.ssoctl("sessions", "revoke", "--", sid, "other").returncode == 64, "still exactly one"
