"""No secret in any log line (docs/ARCHITECTURE.md security rules; RFC 9700 §4.x token
leakage): after a whole session — sign-in, code exchange, refresh, userinfo,
Native SSO, revocation, logout and a flood of rate-limited logouts carrying
an ID token — no log file under $GATEHOUSE_HOME/log holds a password, code,
token, device secret or session cookie. A stack of its own, with the default
rate limits, so the flood is really refused."""
import concurrent.futures
import os
import time
import uuid

from oidc_flow import SCOPE, App, query
from stack import DEMO_PASSWORD, Stack


def all_logs(stack):
    folder = os.path.join(stack.home, "log")
    text = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
            text[name] = handle.read()
    return text


def test_no_secret_reaches_any_log_file():
    stack = Stack().start()
    try:
        http = stack.session()
        app = App(stack, http, scope=SCOPE + " device_sso")
        first = app.authorize()
        login_page = first.headers["Location"]
        form_cookie = http.cookies.get("gh_login")
        signed_in = app.login(login_page)
        session_cookie = http.cookies.get("sso_session")
        code = query(signed_in.headers["Location"])["code"]
        tokens = app.exchange(code, device_id=str(uuid.uuid4())).json()
        refreshed = http.post(stack.issuer + "/token", data={"grant_type": "refresh_token", "client_id": app.client_id,
                                                             "refresh_token": tokens["refresh_token"]}).json()
        assert http.get(stack.issuer + "/userinfo",
                        headers={"Authorization": "Bearer " + refreshed["access_token"]}).status_code == 200
        native = http.post(stack.issuer + "/token", auth=("mobile-app-002", ""), data={
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "audience": stack.issuer,
            "subject_token": tokens["id_token"], "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "actor_token": tokens["device_secret"], "actor_token_type": "urn:openid:params:token-type:device-secret"})
        assert native.status_code == 200, native.text
        assert http.post(stack.issuer + "/revoke", data={"client_id": app.client_id,
                                                          "token": refreshed["refresh_token"]}).status_code == 200
        # A flood of logouts with an ID token in the query: most are refused
        # by nginx's limit_req (429), whose refusals name the request line.
        # Sent 16 at a time, in rounds of 150 until one is refused (at most
        # 900): under three test workers a TLS handshake per request can keep
        # one round under the zone's refill (30 r/s, burst 60).
        hint = refreshed["id_token"]

        def logout(_):
            return stack.session().get(stack.issuer + "/logout", params={"id_token_hint": hint}, allow_redirects=False).status_code
        flood = []
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            while 429 not in flood and len(flood) < 900:
                flood += list(pool.map(logout, range(150)))
        assert 429 in flood, flood
        time.sleep(1.5)  # nginx flushes its buffered access log every second

        secrets = {"password": DEMO_PASSWORD, "login form cookie": form_cookie, "code": code,
                   "SSO session cookie": session_cookie, "device secret": tokens["device_secret"],
                   "native access token": native.json()["access_token"]}
        for name in ("access_token", "id_token", "refresh_token"):
            secrets[name] = tokens[name]
            secrets["refreshed " + name] = refreshed[name]
        # Tokens are long; a JWT's signature part alone is enough to be a leak.
        probes = {name: value.rsplit(".", 1)[-1] for name, value in secrets.items() if value}
        assert len(probes) == len(secrets), [name for name, value in secrets.items() if not value]
        logs = all_logs(stack)
        assert "nginx-access.log" in logs and "token.log" in logs and "login.log" in logs, sorted(logs)
        assert sum(len(text) for text in logs.values()) > 1000  # the logs were written
        leaks = [(name, file) for name, probe in probes.items() for file, text in logs.items() if probe in text]
        assert leaks == [], leaks
        assert_logs_are_owner_only(stack, logs)
    finally:
        stack.remove()


def assert_logs_are_owner_only(stack, logs):
    """After the whole session, every log file (nginx's own included) is
    0600 in a 0700 folder, doctor says so, and fails on a readable one."""
    folder = os.path.join(stack.home, "log")
    assert os.stat(folder).st_mode & 0o777 == 0o700
    modes = {name: oct(os.stat(os.path.join(folder, name)).st_mode & 0o777) for name in logs}
    assert set(modes.values()) == {"0o600"}, modes
    lines = stack.ssoctl("doctor").stdout.splitlines()
    assert f"ok  files.log-dir  {folder} 0700" in lines, lines
    assert f"ok  files.logs  {len(logs)} files in {folder}, none readable by group or other" in lines, lines
    os.chmod(os.path.join(folder, "nginx-error.log"), 0o644)
    try:
        doctor = stack.ssoctl("doctor")
        assert doctor.returncode == 1
        assert (f"fail  files.logs  group or other can access nginx-error.log (0644: group-readable, other-readable) "
                f"in {folder}; chmod 600 them (expected 0600)") in doctor.stdout.splitlines(), doctor.stdout
    finally:
        os.chmod(os.path.join(folder, "nginx-error.log"), 0o600)
