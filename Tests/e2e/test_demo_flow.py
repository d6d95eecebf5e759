"""Scripts/demo-flow against the test stack: every step the README says it
runs (the nine of "Sign in with curl"), each with the answer it must show."""
import base64
import hashlib
import os
import re
import subprocess

from stack import DEMO_PASSWORD, ROOT, free_base_port

STEPS = 9


def run_demo_flow(stack, **env):
    environment = dict(stack.env, GATEHOUSE_HOME=stack.home, GATEHOUSE_BASE_PORT=str(stack.base),
                       GATEHOUSE_DEMO_PASSWORD=DEMO_PASSWORD)
    environment.update(env)
    return subprocess.run([os.path.join(ROOT, "Scripts", "demo-flow")], env=environment, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def sections(output):
    """{step number: the lines printed under "== N. ..."}, in order."""
    found, current = {}, None
    for line in output.splitlines():
        heading = re.match(r"== (\d+)\. ", line)
        if heading:
            current = int(heading.group(1))
            assert current not in found, f"step {current} printed twice"
            found[current] = [line]
        elif current is not None and line:
            found[current].append(line)
    return found


def answers(lines):
    return [line[2:] for line in lines if line.startswith("→ ")]


def refresh_token_prefix(answer):
    return re.search(r'"refresh_token":"([^"…]+)…"', answer).group(1)


def test_demo_flow_runs_and_checks_every_step_of_the_readme(stack):
    result = run_demo_flow(stack)
    assert result.returncode == 0, result.stdout + result.stderr
    steps = sections(result.stdout)
    assert list(steps) == list(range(1, STEPS + 1)), f"steps printed: {list(steps)}"

    # 1. PKCE: the challenge is the S256 of the verifier.
    values = dict(line.split("=", 1) for line in steps[1][1:])
    digest = hashlib.sha256(values["code_verifier"].encode()).digest()
    assert values["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    assert values["state"] and values["nonce"]

    # 2. /authorize without a session: the login page.
    [answer] = answers(steps[2])
    assert re.match(r"HTTP/1\.1 30[23] .*, Location: " + re.escape(stack.issuer + "/login.html?client_id="), answer), answer

    # 3. /login: back to the app with a code, the same state and iss.
    [answer] = answers(steps[3])
    assert "Location: myapp:auth/callback?code=" in answer, answer
    assert f"state={values['state']}" in answer and "&iss=" in answer, answer

    # 4. The code exchange: access, ID and refresh token.
    [answer] = answers(steps[4])
    assert answer.startswith('200 {"access_token":"eyJ'), answer
    assert '"id_token":"eyJ' in answer and '"token_type":"Bearer"' in answer
    first_refresh = refresh_token_prefix(answer)

    # 5. Both APIs.
    api_a, api_b = answers(steps[5])
    assert api_a.startswith("200 ") and '"source":"ServerA"' in api_a and '"user":"alice@example.com"' in api_a, api_a
    assert api_b.startswith("200 ") and '"source":"ServerB"' in api_b, api_b

    # 6. SSO: a code again, without the login page.
    [answer] = answers(steps[6])
    assert "Location: myapp:auth/callback?code=" in answer, answer

    # 7. Refresh: a new refresh token; the old one, sent again at once, brings back that same successor.
    rotated, retried = answers(steps[7])
    assert rotated.startswith('200 {"access_token":"eyJ'), rotated
    assert refresh_token_prefix(rotated) != first_refresh, "the refresh token was not rotated"
    assert retried.startswith("200 ") and refresh_token_prefix(retried) == refresh_token_prefix(rotated), retried
    assert "the old refresh token is spent: a retry gets the same successor" in steps[7]

    # 8. Logout returns to the app's registered post-logout URI with the state.
    [answer] = answers(steps[8])
    assert answer.endswith("Location: myapp:auth/logout?state=bye"), answer
    assert "id_token_hint=" in steps[8][1] and "post_logout_redirect_uri=" in steps[8][1]

    # 9. After logout: the refresh token is refused and /authorize asks for a login.
    refused, authorize = answers(steps[9])
    assert refused.startswith('400 {"error":"invalid_grant"'), refused
    assert "Location: " + stack.issuer + "/login.html?client_id=" in authorize, authorize

    assert result.stdout.rstrip().splitlines()[-1].startswith("Done: "), result.stdout


def test_demo_flow_stops_loudly_at_the_first_unexpected_answer(stack):
    # A port where nothing listens: step 2 gets no answer.
    result = run_demo_flow(stack, GATEHOUSE_BASE_PORT=str(free_base_port()))
    assert result.returncode == 1
    assert "error: step 2 failed: no answer from https://localhost:" in result.stderr, result.stderr
    assert "== 3." not in result.stdout and "Done" not in result.stdout
