"""The README's curl walkthroughs and ssoctl cheat sheet, and docs/API.md's
DPoP walkthrough, run as written against a test stack; each leaves only files the checkout's .gitignore
ignores (they run in the checkout, for a reader)."""
import json
import os
import re
import subprocess

from oidc_flow import App
from stack import DEMO_PASSWORD, ROOT, Stack
from test_walkthrough_scratch_files import not_ignored


def walkthrough_script(heading="## Sign in with curl", document="README.md"):
    text = open(os.path.join(ROOT, document)).read()
    section = text[text.index(heading):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def run_on(stack, script, directory):
    """Runs `script` in `directory` (standing in for the checkout) against the stack."""
    # Only what differs on the test stack changes: ports, CA path, password, ssoctl (the built binary, the stack's home).
    for offset in range(4):
        script = script.replace(f"localhost:{8443 + offset}", f"localhost:{stack.base + offset}")
    script = script.replace("CA=var/tls/ca.pem", f"CA={stack.ca}").replace("'the demo password'", f"'{DEMO_PASSWORD}'")
    script = script.replace("Scripts/ssoctl ", os.path.join(os.environ["BIN_DIR"], "ssoctl") + " ")
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=directory, env=stack.env, capture_output=True,
                            text=True, timeout=60)
    left = not_ignored(path.name for path in directory.iterdir())
    assert not left, f"the walkthrough leaves files that .gitignore does not ignore: {left}"
    return result


def test_the_readme_walkthrough_works_verbatim(stack, tmp_path):
    result = run_on(stack, walkthrough_script(), tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(stack.issuer + "/login.html?client_id=")
    assert lines[1].startswith("myapp:auth/callback?code=")
    assert '"token_type":"Bearer"' in lines[2]
    assert '"source":"ServerA"' in lines[3] and '"user":"alice@example.com"' in lines[3]
    assert '"source":"ServerB"' in lines[4]
    assert lines[5].startswith("myapp:auth/callback?code="), "SSO: no login page the second time"
    assert '"refresh_token":"' in lines[6] and '"token_type":"Bearer"' in lines[6], "refresh"
    assert lines[7] == "the old refresh token is spent: a retry gets the same successor", "rotation"
    assert lines[8] == "myapp:auth/logout?state=bye", "logout returns to the app"
    assert '"error":"invalid_grant"' in lines[9], "after logout the refresh token is refused"
    assert lines[10].startswith(stack.issuer + "/login.html?client_id="), "after logout /authorize asks for a login"
    assert len(lines) == 11, lines[11:]


def test_the_readme_native_sso_walkthrough_works_verbatim(stack, tmp_path):
    result = run_on(stack, walkthrough_script("## Native SSO with curl"), tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("app #1 has a device secret: ") and len(lines[0]) > 30
    assert '"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"' in lines[1]
    assert '"source":"ServerA"' in lines[2] and '"user":"alice@example.com"' in lines[2]
    assert '"access_token":"' in lines[3], "seed profile (device_id)"


def test_the_readme_own_api_and_machine_client_walkthrough_works_verbatim(stack, tmp_path):
    try:
        result = run_on(stack, walkthrough_script("## Your own API and a machine client with curl"), tmp_path)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0].startswith("added API https://inventory.example.com"), lines
        assert lines[1] == '"inventory:read"', "discovery lists the new scope without a restart"
        assert lines[2] == "added confidential client nightly-job"
        assert lines[3] == f'"aud":["{stack.api_a}"]'
        assert lines[4] == '"user":"nightly-job"'
        assert lines[5] == '"error":"invalid_target"'
        assert len(lines) == 6, lines[6:]
    finally:
        stack.ssoctl("client", "delete", "nightly-job")
        stack.ssoctl("api", "remove", "https://inventory.example.com")


def test_the_api_documents_dpop_walkthrough_works_verbatim(stack, tmp_path):
    script = walkthrough_script("### The flow with curl", os.path.join("docs", "API.md"))
    assert "dpop_jkt=$JKT" in script
    result = run_on(stack, script, tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith('{"error":"use_dpop_nonce"'), "the first proof has no nonce"
    assert '"token_type":"DPoP"' in lines[1] and '"refresh_token":"' in lines[1], "bound tokens"
    assert lines[2].startswith('"cnf":{"jkt":"') and len(lines[2]) == len('"cnf":{"jkt":""}') + 43
    assert '"email":"alice@example.com"' in lines[3], "userinfo under the DPoP scheme"
    assert '"error":"invalid_token"' in lines[4] and "DPoP-bound" in lines[4], "a copy used as a bearer token"
    assert '"error":"invalid_dpop_proof"' in lines[5], "a bound refresh token without a proof"
    assert '"token_type":"DPoP"' in lines[6] and '"refresh_token":"' in lines[6], "refresh with a proof"
    assert len(lines) == 7, lines[7:]


def test_the_readme_ssoctl_cheat_sheet_runs_verbatim_in_order_on_a_fresh_stack(tmp_path):
    fresh = Stack().start()  # of its own: the sheet rotates and retires keys, and starts from the demo data only
    try:
        App(fresh, fresh.session()).sign_in()  # a session of alice's for the sheet's `sessions revoke` to end
        result = run_on(fresh, walkthrough_script("## Administration: `Scripts/ssoctl`"), tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "added confidential client orders-sync" in result.stdout and "retired " in result.stdout, result.stdout
        assert "ended session " in result.stdout, "alice's session ended"
        sessions = json.loads(fresh.ssoctl("sessions", "list", "alice@example.com", "--json").stdout)
        assert sessions and all(session["state"] != "live" for session in sessions), sessions
        clients = fresh.ssoctl("client", "list").stdout
        assert "orders-sync" in clients and "reporting" in clients and "com.example.app" not in clients, clients
        assert "orders.example.com" not in fresh.ssoctl("api", "list").stdout
        assert "bob@example.com" not in fresh.ssoctl("user", "list").stdout
    finally:
        fresh.remove()
