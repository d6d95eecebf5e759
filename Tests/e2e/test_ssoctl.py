"""ssoctl against a live stack: bad input changes nothing; good input takes effect."""
import json
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
    (["client", "add", "new-app", "--redirect-uri", "com.example.new:/cb", "--name", "Two\nLines"], None),
    (["client", "add", "new-app", "--redirect-uri", "com.example.new:/cb", "--name", "x" * 65], None),
    (["client", "update", "mobile-app-001", "--name", " Outer spaces"], None),
    (["client", "update", "mobile-app-001", "--name", "\u202eppa omed"], None),
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


def test_a_client_name_is_listed_and_removable(stack):
    """`--name`: what the pages call the client; --json has it as `name`."""
    added = stack.ssoctl("client", "add", "named-app", "--redirect-uri", "com.example.named:/cb", "--name", "Acme Shöp <Partner>")
    assert added.returncode == 0, added.stderr
    def listed():
        return [c for c in json.loads(stack.ssoctl("client", "list", "--json").stdout) if c["client_id"] == "named-app"][0]
    assert listed()["name"] == "Acme Shöp <Partner>"
    assert "  name            Acme Shöp <Partner>" in stack.ssoctl("client", "list").stdout
    assert stack.ssoctl("client", "update", "named-app", "--name", "Acme Shop").returncode == 0
    assert listed()["name"] == "Acme Shop"
    assert stack.ssoctl("client", "update", "named-app", "--name", "").returncode == 0
    assert listed()["name"] is None
    demo = [c for c in json.loads(stack.ssoctl("client", "list", "--json").stdout) if c["client_id"] == "mobile-app-001"][0]
    assert demo["name"] == "Demo Mobile App 1"


def test_client_list_fits_a_100_column_terminal(stack):
    """The listing wraps to 100 columns and still shows every value: the
    table it replaced was over 300 columns wide with the demo clients."""
    uris = [f"https://wide-{n}.example.com/oauth/callback/with/a/rather/long/path/{n}" for n in range(4)]
    scopes = ["openid", "profile", "email", "offline_access", "api:serverA", "api:serverB"]
    args = ["client", "add", "wide-app", "--name", "Wide App " + "x" * 55]  # 64 characters, the most allowed
    for uri in uris:
        args += ["--redirect-uri", uri, "--post-logout-redirect-uri", uri + "/bye"]
    for scope in scopes:
        args += ["--scope", scope]
    assert stack.ssoctl(*args).returncode == 0
    listing = stack.ssoctl("client", "list").stdout
    lines = listing.splitlines()
    assert max(len(line) for line in lines) <= 100, [line for line in lines if len(line) > 100]
    for uri in uris:
        assert any(line.endswith(" " + uri) for line in lines), uri
        assert any(line.endswith(" " + uri + "/bye") for line in lines), uri
    assert all(scope in listing for scope in scopes)
    for demo in ("mobile-app-001", "mobile-app-002", "myapp:auth/callback", "Demo Mobile App 2"):
        assert demo in listing
