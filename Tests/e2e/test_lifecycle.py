"""The two commands' promises: crash restart, clean stop, state reuse."""
import concurrent.futures
import grp
import os
import pwd
import signal
import subprocess
import threading
import time

from oidc_flow import App
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


def burst(stack, path, data, count, until_refused=0):
    """`count` POSTs at once from one address, 16 at a time, each thread on
    a kept connection (a TLS handshake per request made a busy machine send
    fewer than /token's 50 a second); with `until_refused`, more rounds of
    `count` until a 429 comes back or that many were sent."""
    local = threading.local()

    def post(_):
        if not hasattr(local, "session"):
            local.session = stack.session()
        return local.session.post(stack.issuer + path, data=data, allow_redirects=False)
    responses = []
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        while True:
            responses += list(pool.map(post, range(count)))
            if len(responses) >= until_refused or any(response.status_code == 429 for response in responses):
                return responses


def test_sigint_stops_everything_and_a_second_start_reuses_the_state():
    first = Stack().start()
    try:
        kid = first.ssoctl("keys", "list").stdout.splitlines()[1].split()[0]
        assert f"password: {DEMO_PASSWORD}" in first.log(), "first start prints the demo credentials"
        assert first.processes(), "the stack runs"
        # Default per-address limits: /login 10 r/s with a burst of 20.
        http = first.session()
        assert http.post(first.issuer + "/login", data={"req": "x"}, allow_redirects=False).status_code != 429
        responses = burst(first, "/login", {"req": "x"}, 60)
        statuses = [response.status_code for response in responses]
        assert 429 in statuses
        # A sign-in page's 429 is a page in their style, with Retry-After.
        page = next(response for response in responses if response.status_code == 429)
        assert page.headers["Retry-After"] == "1" and page.headers["Content-Type"].startswith("text/html")
        assert "<h1>Too many attempts</h1>" in page.text and "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
        # A JSON endpoint's 429 is JSON (RFC 6749 §5.2's shape), never nginx's HTML: /token 50 r/s, burst 200.
        refused = burst(first, "/token", {"grant_type": "x"}, 400, until_refused=4000)
        limited = [response for response in refused if response.status_code == 429]
        assert limited, "the token endpoint's limit applies"
        assert limited[0].headers["Content-Type"] == "application/json" and limited[0].headers["Retry-After"] == "1"
        assert limited[0].json()["error"] == "temporarily_unavailable"
        assert limited[0].headers["Cache-Control"] == "no-store"
        assert first.stop(signal.SIGINT) == 0
        time.sleep(0.5)
        assert first.processes() == [], "nothing left behind"

        # A home left by an older Scripts/run: everything root's, logs open to all.
        subprocess.run(["chown", "-R", "root:root", first.home], check=True)
        logs = os.path.join(first.home, "log")
        os.chmod(logs, 0o755)
        os.chmod(os.path.join(logs, "token.log"), 0o644)

        second = Stack(home=first.home).start()
        assert owner(logs) == "root:root 0700" and owner(os.path.join(logs, "token.log")) == "root:root 0600"
        assert owner(os.path.join(first.home, "keys", kid + ".pem")) == "gatehouse:gatehouse 0600", "handed over"
        app = App(second, second.session())
        tokens = app.exchange(app.sign_in())
        assert tokens.status_code == 200, tokens.text
        assert second.ssoctl("keys", "list").stdout.splitlines()[1].split()[0] == kid, "same signing key"
        users = second.ssoctl("user", "list").stdout
        assert users.count("alice@example.com") == 1, "demo user not created twice"
        assert second.stop(signal.SIGTERM) == 0
        time.sleep(0.5)
        assert second.processes() == []
    finally:
        first.remove()


def owner(path):
    info = os.stat(path)
    return f"{pwd.getpwuid(info.st_uid).pw_name}:{grp.getgrgid(info.st_gid).gr_name} {info.st_mode & 0o777:04o}"


def test_private_key_and_database_modes(stack):
    keys = os.path.join(stack.home, "keys")
    assert owner(keys) == "gatehouse:gatehouse 0700"
    for name in os.listdir(keys):
        assert owner(os.path.join(keys, name)) == "gatehouse:gatehouse 0600", name
    for name in ("gatehouse.sqlite", "gatehouse.sqlite-wal", "gatehouse.sqlite-shm"):
        assert owner(os.path.join(stack.home, name)) == "gatehouse:gatehouse 0600", name
    assert owner(stack.home) == "gatehouse:gatehouse 0711"
    assert owner(os.path.join(stack.home, "tls", "ca.key")) == "root:root 0600"
    assert owner(os.path.join(stack.home, "tls", "server.key")) == "root:root 0600"
    assert owner(os.path.join(stack.home, "gatehouse.conf")) == "root:gatehouse 0640"
    # Only nginx's workers (group gatehouse-web, its only member) may connect.
    sockets = [name for name in os.listdir(os.path.join(stack.home, "run")) if name.endswith(".sock")]
    assert len(sockets) == 2 * 14, sockets  # 12 issuer responders (ops and admin included), api-a, api-b
    for name in sockets:
        assert owner(os.path.join(stack.home, "run", name)) == "gatehouse:gatehouse-web 0660", name
    assert grp.getgrnam("gatehouse-web").gr_mem == [], "no other member in nginx's group"
    assert [entry.pw_name for entry in pwd.getpwall() if entry.pw_gid == grp.getgrnam("gatehouse-web").gr_gid] == ["gatehouse-web"]
    # The logs: root's alone, nginx's own included.
    logs = os.path.join(stack.home, "log")
    assert owner(logs) == "root:root 0700"
    names = sorted(os.listdir(logs))
    assert {"nginx-error.log", "nginx-access.log", "token.log", "api-a.log"} <= set(names), names
    for name in names:
        assert owner(os.path.join(logs, name)) == "root:root 0600", name
