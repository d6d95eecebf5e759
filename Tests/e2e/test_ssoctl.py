"""ssoctl against a live stack: bad input changes nothing; good input takes effect."""
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
