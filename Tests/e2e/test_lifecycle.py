"""The two commands' promises: crash restart, clean stop, state reuse."""
import os
import signal
import time

from stack import DEMO_PASSWORD, Stack


def test_a_killed_responder_comes_back_and_requests_keep_succeeding(stack, http):
    old = stack.pid("jwks-0")
    os.kill(old, signal.SIGKILL)
    statuses = [http.get(stack.issuer + "/.well-known/jwks.json").status_code for _ in range(20)]
    assert statuses == [200] * 20
    deadline = time.time() + 5
    while time.time() < deadline:
        new = stack.pid("jwks-0")
        if new != old and os.path.exists(f"/proc/{new}"):
            break
        time.sleep(0.1)
    assert new != old and os.path.exists(f"/proc/{new}"), "the supervisor restarted the slot"
    assert "responder jwks[0]" in stack.log()


def test_sigint_stops_everything_and_a_second_start_reuses_the_state():
    first = Stack().start()
    try:
        kid = first.ssoctl("keys", "list").stdout.splitlines()[1].split()[0]
        assert f"password: {DEMO_PASSWORD}" in first.log(), "first start prints the demo credentials"
        assert first.processes(), "the stack runs"
        # Default per-address limits: /login 10 r/s with a burst of 20.
        http = first.session()
        statuses = [http.post(first.issuer + "/login", data={"req": "x"}, allow_redirects=False).status_code for _ in range(40)]
        assert 429 in statuses and statuses[0] != 429
        assert first.stop(signal.SIGINT) == 0
        time.sleep(0.5)
        assert first.processes() == [], "nothing left behind"

        second = Stack(home=first.home).start()
        assert second.ssoctl("keys", "list").stdout.splitlines()[1].split()[0] == kid, "same signing key"
        users = second.ssoctl("user", "list").stdout
        assert users.count("alice@example.com") == 1, "demo user not created twice"
        assert second.stop(signal.SIGTERM) == 0
        time.sleep(0.5)
        assert second.processes() == []
    finally:
        first.remove()


def test_private_key_and_database_modes(stack):
    keys = os.path.join(stack.home, "keys")
    assert os.stat(keys).st_mode & 0o777 == 0o700
    for name in os.listdir(keys):
        assert os.stat(os.path.join(keys, name)).st_mode & 0o777 == 0o600
    assert os.stat(os.path.join(stack.home, "gatehouse.sqlite")).st_mode & 0o777 == 0o600
    assert os.stat(os.path.join(stack.home, "tls", "ca.key")).st_mode & 0o777 == 0o600
    for name in os.listdir(os.path.join(stack.home, "run")):
        if name.endswith(".sock"):
            assert os.stat(os.path.join(stack.home, "run", name)).st_mode & 0o777 == 0o600
