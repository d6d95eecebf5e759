"""Upstream identity providers, as `ssoctl idp` manages them, against a
real OpenID Connect provider: a second Gatehouse stack (its own home and
ports, the first one's tls/ copied in, so the first trusts its
certificates as it would a public provider's). The discovery document is
read over HTTPS through the issuer's outbound client; the secret is sealed."""
import json
import os
import shutil
import tempfile

import pytest

from stack import Stack


@pytest.fixture(scope="module")
def upstream(stack):
    home = tempfile.mkdtemp(prefix="gatehouse-e2e-upstream-")
    shutil.copytree(os.path.join(stack.home, "tls"), os.path.join(home, "tls"))
    provider = Stack(home=home)
    provider.owns_home = True
    provider.start()
    yield provider
    provider.remove()


def providers(stack):
    listed = stack.ssoctl("idp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def audit_lines(stack):
    with open(os.path.join(stack.home, "log", "audit.log")) as handle:
        return [json.loads(line) for line in handle]


def test_a_provider_is_added_by_its_discovery_document_listed_and_removed(stack, upstream):
    secret = "upstream-secret-" + os.urandom(6).hex()
    audited_before = len(audit_lines(stack))  # another module's stack may have had a "corp" before
    added = stack.ssoctl("idp", "add", "corp", "--issuer", upstream.issuer, "--client-id", "gatehouse-downstream", "--secret-stdin",
                         "--label", "Corp SSO", input=secret + "\n")
    try:
        assert added.returncode == 0, added.stderr
        assert f"redirect URI to register at the provider: {stack.issuer}/federation/callback" in added.stdout
        [listed] = providers(stack)
        assert listed == {"name": "corp", "preset": "generic", "issuer": upstream.issuer, "client_id": "gatehouse-downstream",
                          "scopes": ["openid", "email", "profile"], "label": "Corp SSO",
                          "authorization_endpoint": upstream.issuer + "/authorize", "token_endpoint": upstream.issuer + "/token",
                          "jwks_uri": upstream.issuer + "/.well-known/jwks.json"}
        table = stack.ssoctl("idp", "list").stdout
        assert "corp" in table and "Corp SSO" in table and secret not in table
        [(sealed,)] = stack.query("SELECT secret_sealed FROM identity_providers WHERE name = ?", "corp")
        assert secret.encode() not in bytes(sealed), "sealed, never in clear"
        assert secret not in stack.database_dump()
        changes = [line for line in audit_lines(stack)[audited_before:] if line["event"] == "admin_change" and line.get("target") == "corp"]
        assert [line["reason"] for line in changes] == ["idp add"]
        assert all(secret not in json.dumps(line) for line in audit_lines(stack))
        again = stack.ssoctl("idp", "add", "corp", "--issuer", upstream.issuer, "--client-id", "x", "--secret-stdin", input="s\n")
        assert again.returncode == 1 and "already exists" in again.stderr
    finally:
        removed = stack.ssoctl("idp", "remove", "corp")
    assert removed.returncode == 0 and "removed identity provider corp" in removed.stdout
    assert providers(stack) == []
    gone = stack.ssoctl("idp", "remove", "corp")
    assert gone.returncode == 1 and "no identity provider named corp" in gone.stderr


@pytest.mark.parametrize("issuer_of, says", [
    (lambda up: up.issuer + "/", "names the issuer"),  # the document's issuer lacks the slash: not identical (Discovery §4.3)
    (lambda up: up.issuer + "/tenant", "answered 404"),
    (lambda up: up.issuer.replace("https://", "http://"), "https URL"),
    (lambda up: "https://provider.invalid", "provider.invalid"),
    (lambda up: up.issuer + "?x=1", "https URL"),
])
def test_a_provider_that_does_not_check_out_is_refused_and_nothing_is_stored(stack, upstream, issuer_of, says):
    refused = stack.ssoctl("idp", "add", "corp", "--issuer", issuer_of(upstream), "--client-id", "c", "--secret-stdin", input="s\n")
    assert refused.returncode == 1 and says in refused.stderr, refused.stderr
    assert providers(stack) == []


def test_a_provider_whose_certificate_is_not_trusted_is_refused(stack, upstream):
    """The upstream with a CA the downstream does not know: its own tls/."""
    stranger = Stack()
    stranger.start()
    try:
        refused = stack.ssoctl("idp", "add", "stranger", "--issuer", stranger.issuer, "--client-id", "c", "--secret-stdin", input="s\n")
        assert refused.returncode == 1 and "certificate" in refused.stderr.lower(), refused.stderr
        assert providers(stack) == []
    finally:
        stranger.remove()


def test_bad_arguments_are_refused_before_any_request(stack):
    for args, says in [(["Corp", "--issuer", "https://x.example", "--client-id", "c", "--secret-stdin"], "the name must be"),
                       (["corp", "--client-id", "c", "--secret-stdin"], "--issuer is required"),
                       (["corp", "--issuer", "https://x.example", "--client-id", "c"], "client secret is required"),
                       (["apple", "--preset", "apple", "--client-id", "c"], "--preset apple needs"),
                       (["corp", "--preset", "saml", "--issuer", "https://x.example", "--client-id", "c", "--secret-stdin"], "unknown preset")]:
        refused = stack.ssoctl("idp", "add", *args, input="s\n")
        assert refused.returncode == 1 and says in refused.stderr, (args, refused.stderr)
    assert providers(stack) == []
