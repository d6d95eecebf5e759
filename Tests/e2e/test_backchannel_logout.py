"""OpenID Connect Back-Channel Logout 1.0 end to end, with HTTPS receivers
started here on loopback with the stack's own certificate (from its local
CA, which the mail sender trusts in the development layout).

Every way a session ends (RP-initiated logout, "sign out everywhere" on
/account, `ssoctl sessions revoke`, `user passwd`, `user disable`, `user
delete`, refresh-token reuse) delivers one logout token per client that was
issued tokens in the session, within 10 s, valid as §2.6 says (checked here
with PyJWT, independently of the issuer), and the app's next refresh says
why in `reason`. A receiver answering 503 gets it again; one answering 400
is recorded and left alone; one that is down across a restart of the
stack loses nothing; two PostgreSQL nodes deliver each notice once. The
receivers of docs/BACKCHANNEL-LOGOUT.md (Python and Go) run as written."""
import base64
import collections
import json
import re
import os
import shutil
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

import pg_cluster
from listening_ports import free_port
from oidc_flow import SCOPE, App
from stack import ROOT, Stack, https_server, wait_for
from test_account_sessions import FIREFOX, Browser
from test_account_security import new_user

EVENT = "http://schemas.openid.net/event/backchannel-logout"
DOCS = Path(ROOT, "docs", "backchannel-logout")


class Receiver:
    """An HTTPS receiver on 127.0.0.1: records each POST's form and answers
    from a script (then 200). `delay` holds each answer back, so that two
    senders' batches overlap."""

    def __init__(self, home, port=None, delay=0.0):
        self.port = port or free_port()
        self.lock = threading.Lock()
        self.posts = []  # (path, form, status answered)
        self.script = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                form = parse_qs(self.rfile.read(length).decode())
                if delay:
                    time.sleep(delay)
                with receiver.lock:
                    status = receiver.script.pop(0) if receiver.script else 200
                    receiver.posts.append((self.path, form, self.headers.get("Content-Type"), status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = https_server(home, self.port, Handler)

    def url(self, client):
        return f"https://127.0.0.1:{self.port}/backchannel?client={client}"

    def answer_next(self, *statuses):
        with self.lock:
            self.script.extend(statuses)

    def tokens(self, sid, accepted_only=True):
        """The logout tokens received for `sid` (those answered 2xx)."""
        with self.lock:
            posts = list(self.posts)
        found = []
        for path, form, _, status in posts:
            token = form["logout_token"][0]
            if unverified(token).get("sid") == sid and (200 <= status < 300 or not accepted_only):
                found.append((path, token))
        return found

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def unverified(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def validate(stack, token, client_id):
    """§2.6, with the issuer's published keys: signature (RS256, typ
    logout+jwt), iss, aud, iat, exp, jti, the event, sid and sub, no nonce."""
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "RS256" and header["typ"] == "logout+jwt", header
    keys = stack.session().get(stack.issuer + "/.well-known/jwks.json", timeout=10).json()["keys"]
    key = jwt.PyJWK(next(key for key in keys if key["kid"] == header["kid"])).key
    claims = jwt.decode(token, key, algorithms=["RS256"], audience=client_id, issuer=stack.issuer,
                        options={"require": ["iss", "aud", "iat", "exp", "jti", "events", "sid", "sub"]})
    assert set(claims) == {"iss", "sub", "aud", "iat", "exp", "jti", "events", "sid"}, "never a nonce (§2.4)"
    assert claims["events"] == {EVENT: {}}
    assert abs(claims["iat"] - time.time()) < 30 and claims["exp"] - claims["iat"] == 120
    return claims


def id_claims(tokens):
    return unverified(tokens["id_token"])


def refresh_reason(stack, tokens, client_id="mobile-app-001"):
    response = stack.session().post(stack.issuer + "/token", data={
        "grant_type": "refresh_token", "client_id": client_id, "refresh_token": tokens["refresh_token"]})
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant", response.text
    return response.json().get("reason")


def outbox(stack):
    return [row for row in stack.rows("mail_outbox") if row["kind"] == "backchannel_logout"]


def set_uri(stack, client, uri):
    arguments = ["--backchannel-logout-uri", uri] if uri else ["--no-backchannel-logout"]
    changed = stack.ssoctl("client", "update", client, *arguments)
    assert changed.returncode == 0, changed.stderr


@pytest.fixture(scope="module")
def bcl():
    """A stack of its own (its outbox is looked at) whose two demo apps
    have back-channel URIs at one recording receiver."""
    stack = Stack(extra_env={"GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s",
                             "GATEHOUSE_AUTHORIZE_RATE": "1000r/s", "GATEHOUSE_SWEEP_INTERVAL": "86400"}).start()
    receiver = Receiver(stack.home)
    for client in ("mobile-app-001", "mobile-app-002"):
        set_uri(stack, client, receiver.url(client))
    yield stack, receiver
    receiver.stop()
    stack.remove()


def signed_in(stack):
    """A new user signed in to mobile-app-001 in a browser of its own."""
    email, password, _ = new_user(stack)
    browser = Browser(stack, email, password, FIREFOX)
    return email, browser, id_claims(browser.tokens)["sid"]


def rp_logout(stack, email, browser, sid):
    response = browser.http.get(stack.issuer + "/logout", params={"id_token_hint": browser.tokens["id_token"]},
                                allow_redirects=False)
    assert response.status_code in (200, 303), response.text


def account_sign_out_everywhere(stack, email, browser, sid):
    response = browser.post("/account/sessions/end-all")
    assert response.status_code == 303, response.text


def ssoctl(*arguments, input=None):
    def run(stack, email, browser, sid):
        result = stack.ssoctl(*[email if argument == "EMAIL" else sid if argument == "SID" else argument for argument in arguments],
                              input=input)
        assert result.returncode == 0, result.stderr
    return run


def refresh_reuse(stack, email, browser, sid):
    spent = browser.tokens["refresh_token"]
    assert browser.refreshes()
    time.sleep(11)  # past the grace window of lost replies
    browser.tokens["refresh_token"] = spent


TRIGGERS = {
    "rp_logout": (rp_logout, "session_ended"),
    "account_sign_out_everywhere": (account_sign_out_everywhere, "session_ended"),
    "ssoctl_sessions_revoke": (ssoctl("sessions", "revoke", "SID"), "session_ended"),
    "ssoctl_user_passwd": (ssoctl("user", "passwd", "EMAIL", "--password-stdin", input="pw-A-new-one-2026\n"), "password_changed"),
    "ssoctl_user_disable": (ssoctl("user", "disable", "EMAIL"), "user_disabled"),
    "ssoctl_user_delete": (ssoctl("user", "delete", "EMAIL"), "refresh_token_expired"),
    "refresh_reuse": (refresh_reuse, "refresh_token_reused"),
}


@pytest.mark.parametrize("trigger", sorted(TRIGGERS))
def test_each_way_a_session_ends_delivers_one_valid_logout_token_within_10_seconds(bcl, trigger):
    stack, receiver = bcl
    email, browser, sid = signed_in(stack)
    subject = id_claims(browser.tokens)["sub"]
    end, reason = TRIGGERS[trigger]
    end(stack, email, browser, sid)
    ended_at = time.time()
    if trigger == "refresh_reuse":
        assert refresh_reason(stack, browser.tokens) == "refresh_token_reused"  # the reuse itself ends the session
        ended_at = time.time()
    (path, token), = wait_for(lambda: receiver.tokens(sid), 10, f"the logout token of {trigger}")
    assert time.time() - ended_at < 10
    assert path == "/backchannel?client=mobile-app-001", "the registered URI, query kept"
    claims = validate(stack, token, "mobile-app-001")
    assert claims["sid"] == sid and claims["sub"] == subject
    assert refresh_reason(stack, browser.tokens) == reason
    time.sleep(1)
    assert len(receiver.tokens(sid, accepted_only=False)) == 1, "one POST: mobile-app-002 was issued nothing in this session"


def test_discovery_says_so_and_both_apps_of_a_native_sso_session_are_told(bcl):
    stack, receiver = bcl
    document = stack.session().get(stack.issuer + "/.well-known/openid-configuration").json()
    assert document["backchannel_logout_supported"] is True
    assert document["backchannel_logout_session_supported"] is True
    http = stack.session()
    app1 = App(stack, http, scope=SCOPE + " device_sso")
    first = app1.exchange(app1.sign_in()).json()
    second = http.post(stack.issuer + "/token", data={
        "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange", "client_id": "mobile-app-002", "audience": stack.issuer,
        "subject_token": first["id_token"], "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
        "actor_token": first["device_secret"], "actor_token_type": "urn:openid:params:token-type:device-secret", "scope": SCOPE})
    assert second.status_code == 200, second.text
    sid = id_claims(first)["sid"]
    revoked = stack.ssoctl("sessions", "revoke", sid)
    assert revoked.returncode == 0, revoked.stderr
    delivered = wait_for(lambda: (lambda found: found if len(found) == 2 else None)(receiver.tokens(sid)), 10, "two logout tokens")
    by_client = {path.split("client=")[1]: token for path, token in delivered}
    assert sorted(by_client) == ["mobile-app-001", "mobile-app-002"]
    for client, token in by_client.items():
        assert validate(stack, token, client)["sid"] == sid
    assert refresh_reason(stack, second.json(), client_id="mobile-app-002") == "session_ended"


def test_a_503_is_retried_and_delivered_and_a_400_is_recorded_and_left(bcl):
    stack, receiver = bcl
    email, browser, sid = signed_in(stack)
    receiver.answer_next(503)
    stack.ssoctl("sessions", "revoke", sid)
    (_, token), = wait_for(lambda: receiver.tokens(sid), 15, "delivery after a 503")
    validate(stack, token, "mobile-app-001")
    assert [status for _, form, _, status in receiver.posts if unverified(form["logout_token"][0])["sid"] == sid] == [503, 200]
    row, = [row for row in outbox(stack) if json.loads(bytes(row["message"]))["sid"] == sid]
    assert row["sent_at"] and row["attempts"] == 2 and "503" in row["last_error"], row

    email, browser, sid = signed_in(stack)
    receiver.answer_next(400)
    stack.ssoctl("sessions", "revoke", sid)
    wait_for(lambda: receiver.tokens(sid, accepted_only=False), 10, "the refused delivery")
    time.sleep(7)  # a retry would have come by now (the first one waits 5 s)
    assert len(receiver.tokens(sid, accepted_only=False)) == 1, "a 400 is not retried"
    row, = [row for row in outbox(stack) if json.loads(bytes(row["message"]))["sid"] == sid]
    assert row["failed_at"] and row["sent_at"] is None and row["last_error"] == "the receiver answered 400", row
    with open(os.path.join(stack.home, "log", "audit.log")) as handle:
        events = [json.loads(line) for line in handle if "backchannel_logout" in line]
    failure, = [event for event in events if event["event"] == "backchannel_logout_failure" and event["sid"] == sid]
    assert failure["client"] == "mobile-app-001" and failure["target"] == f"https://127.0.0.1:{receiver.port}", failure
    # Never the token: no `logout_token` and nothing JWT-shaped (a random sid may hold "eyJ" by chance).
    assert "logout_token" not in json.dumps(events), "never the token"
    assert not re.search(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.", json.dumps(events)), "never the token"
    metrics = stack.session().get(stack.ops + "/metrics", timeout=10).text
    for result in ("sent", "retry", "failed"):
        line, = [line for line in metrics.splitlines() if line.startswith(f'gatehouse_backchannel_logout_total{{result="{result}"}}')]
        assert float(line.split()[-1]) >= 1, line


def test_a_notice_for_a_receiver_down_across_a_restart_is_delivered_later():
    stack = Stack().start()
    port = free_port()
    receiver = None
    try:
        set_uri(stack, "mobile-app-001", f"https://127.0.0.1:{port}/logout")
        email, browser, sid = signed_in(stack)
        stack.ssoctl("user", "disable", email)
        wait_for(lambda: [row for row in outbox(stack) if row["attempts"] >= 1], 15, "a failed attempt")
        assert stack.stop() == 0
        stack.start()
        receiver = Receiver(stack.home, port=port)
        (_, token), = wait_for(lambda: receiver.tokens(sid), 60, "delivery after the restart")
        assert validate(stack, token, "mobile-app-001")["sid"] == sid
    finally:
        if receiver:
            receiver.stop()
        stack.remove()


def go_build(directory, output):
    env = dict(os.environ, GOPROXY="off", GOTOOLCHAIN="local", CGO_ENABLED="0")
    if "HOME" not in env and "GOCACHE" not in env:
        env["GOCACHE"] = str(Path(output).parent / "go-cache")
    built = subprocess.run(["go", "build", "-o", output, "."], cwd=directory, env=env, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr


def test_the_doc_shows_each_receiver_verbatim():
    doc = Path(ROOT, "docs", "BACKCHANNEL-LOGOUT.md").read_text()
    for relative in ("python/receiver.py", "go/main.go", "go/go.mod"):
        assert (DOCS / relative).read_text() in doc, f"docs/backchannel-logout/{relative} is not in the doc as it is"
        assert f"`docs/backchannel-logout/{relative}`" in doc


def test_the_docs_receivers_accept_a_real_logout_token_and_refuse_forgeries(bcl, tmp_path):
    stack, receiver = bcl
    assert shutil.which("go"), "go is missing: Scripts/test installs Debian's golang-go"
    go_build(DOCS / "go", str(tmp_path / "receiver-go"))
    tls = [os.path.join(stack.home, "tls", name) for name in ("server.pem", "server.key")]
    ports = {"python": free_port(), "go": free_port()}
    commands = {
        "python": [sys.executable, str(DOCS / "python" / "receiver.py")],
        "go": [str(tmp_path / "receiver-go")],
    }
    processes = {}
    try:
        for language, command in commands.items():
            arguments = ["--issuer", stack.issuer, "--client-id", "mobile-app-001", "--ca-file", stack.ca, "--cert", tls[0], "--key", tls[1],
                         "--port", str(ports[language])]
            if language == "go":
                arguments = [argument.replace("--", "-", 1) if argument.startswith("--") else argument for argument in arguments]
            processes[language] = subprocess.Popen(command + arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert json.loads(processes[language].stdout.readline()) == {"listening": ports[language]}
        for language in ("python", "go"):
            set_uri(stack, "mobile-app-001", f"https://127.0.0.1:{ports[language]}/")
            email, browser, sid = signed_in(stack)
            stack.ssoctl("sessions", "revoke", sid)
            printed = json.loads(processes[language].stdout.readline())
            assert printed == {"sub": id_claims(browser.tokens)["sub"], "sid": sid}, language
        # A token the issuer did not sign, POSTed by hand: refused with 400.
        stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        kid = jwt.get_unverified_header(browser.tokens["id_token"])["kid"]
        now = int(time.time())
        forged = jwt.encode({"iss": stack.issuer, "aud": "mobile-app-001", "iat": now, "exp": now + 120, "jti": "forged", "sid": sid,
                             "sub": "x", "events": {EVENT: {}}}, stranger, algorithm="RS256", headers={"kid": kid, "typ": "logout+jwt"})
        http = stack.session()
        for language in ("python", "go"):
            answer = http.post(f"https://127.0.0.1:{ports[language]}/", data={"logout_token": forged}, verify=stack.ca)
            assert answer.status_code == 400 and answer.headers["Cache-Control"] == "no-store", language
            assert "refused" in json.loads(processes[language].stdout.readline()), language
    finally:
        set_uri(stack, "mobile-app-001", receiver.url("mobile-app-001"))
        for process in processes.values():
            process.kill()
            process.wait()


@pytest.mark.skipif(bool(os.environ.get("GATEHOUSE_E2E_POSTGRES_SERVER")),
                    reason="PostgreSQL by construction: the SQLite pass already runs it on a cluster of its own")
def test_two_postgresql_nodes_deliver_each_notice_once():
    cluster = pg_cluster.new_cluster()
    first = second = receiver = None
    try:
        env = {"GATEHOUSE_DATABASE_URL": cluster.url, "GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s",
               "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}
        first = Stack(extra_env=env).start()
        second = first.another_node(env)
        receiver = Receiver(first.home, delay=0.2)  # slow enough that the two senders' batches overlap
        set_uri(first, "mobile-app-001", receiver.url("mobile-app-001"))
        email, password, _ = new_user(first)
        sids = [id_claims(Browser(first, email, password, FIREFOX).tokens)["sid"] for _ in range(12)]
        assert first.ssoctl("user", "disable", email).returncode == 0
        wait_for(lambda: all(receiver.tokens(sid) for sid in sids), 60, "twelve deliveries")
        time.sleep(5)  # a duplicate would arrive now
        counts = collections.Counter(unverified(form["logout_token"][0])["sid"] for _, form, _, _ in receiver.posts)
        assert counts == {sid: 1 for sid in sids}, counts
        for sid in sids:
            (_, token), = receiver.tokens(sid)
            validate(first, token, "mobile-app-001")
        claimers = collections.Counter(row["claimed_by"] for row in outbox(first))
        assert len(claimers) == 2, f"both nodes' senders took part: {claimers}"
    finally:
        if receiver:
            receiver.stop()
        for node in (second, first):
            if node:
                node.remove()
        cluster.remove()
