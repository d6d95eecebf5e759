"""Several issuer nodes on one PostgreSQL (private clusters of the test's
own, Debian's binaries, loopback ports): codes and refresh tokens cross
nodes exactly once, reuse is seen across nodes, a node killed with SIGKILL
loses nothing the others need, a primary killed under load fails over to
its synchronous standby with nothing acknowledged missing, an outage
answers 503 with Retry-After until the database is back, and a pg_dump
backup restores to the same issuer.

A node is one more `Scripts/run` with the same GATEHOUSE_DATABASE_URL, the
same GATEHOUSE_ISSUER (and API origins), and copies of the first node's
keys/master.key and tls/ (the contract's recipe); GATEHOUSE_BASE_PORT only
moves where it listens."""
import base64
import hashlib
import os
import signal
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

import database
import pg_cluster
from oidc_flow import App, query
from stack import ROOT, Stack

GRACE = "300"  # a retry after a lost reply (a failover) still gets its successor


def node_env(url):
    return {"GATEHOUSE_DATABASE_URL": url, "GATEHOUSE_REFRESH_GRACE": GRACE, "GATEHOUSE_TOKEN_RATE": "1000r/s",
            "GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}


def another_node(first, url, keys=None):
    """A second node of `first`'s issuer (see Stack.another_node)."""
    return first.another_node(node_env(url), keys)


def token_at(node, http, **form):
    return http.post(f"https://localhost:{node.base}/token", data=form)


def sign_in_at(node, first, http):
    """The browser part on `node`: a code and the app that asked for it."""
    app = App(first, http)
    location = http.get(app.authorize_url().replace(first.issuer, f"https://localhost:{node.base}"), allow_redirects=False)
    login_page = location.headers["Location"]
    signed_in = http.post(f"https://localhost:{node.base}/login", allow_redirects=False,
                          data={"req": query(login_page)["req"], "email": "alice@example.com", "password": "demo-password-e2e"})
    return app, app.code_from(signed_in)


def exchange(node, http, app, code):
    return token_at(node, http, grant_type="authorization_code", code=code, redirect_uri=app.redirect_uri,
                    client_id=app.client_id, code_verifier=app.verifier)


def refresh_at(node, http, token):
    return token_at(node, http, grant_type="refresh_token", client_id="mobile-app-001", refresh_token=token)


def token_hash(token):
    return hashlib.sha256(token.encode()).digest()


@pytest.fixture(scope="module")
def cluster():
    running = pg_cluster.new_cluster()
    yield running
    running.remove()


@pytest.fixture
def fresh_url(cluster):
    """A database of its own on the module's cluster: a new issuer (another
    master key) cannot share the first one's."""
    return database.create_database(cluster.url)


@pytest.fixture(scope="module")
def nodes(cluster):
    first = Stack(extra_env=node_env(cluster.url)).start()
    second = another_node(first, cluster.url)
    yield first, second
    second.remove()
    first.remove()


def test_a_code_from_one_node_redeems_on_the_other_exactly_once(nodes):
    first, second = nodes
    http = first.session()
    app, code = sign_in_at(first, first, http)
    redeemed = exchange(second, http, app, code)
    assert redeemed.status_code == 200, redeemed.text
    assert exchange(first, http, app, code).json()["error_description"] == "the code was already used"
    # The other node's session cookie works here too: SSO across nodes.
    again = http.get(app.authorize_url().replace(first.issuer, f"https://localhost:{second.base}"), allow_redirects=False)
    assert "code=" in again.headers["Location"]


def test_fifty_parallel_redemptions_across_two_nodes_give_one_success(nodes):
    first, second = nodes
    http = first.session()
    app, code = sign_in_at(second, first, http)
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda i: exchange((first, second)[i % 2], first.session(), app, code).status_code, range(50)))
    assert answers.count(200) == 1, answers
    assert set(answers) == {200, 400}, answers


def test_fifty_parallel_refreshes_across_two_nodes_leave_one_live_successor(nodes):
    first, second = nodes
    http = first.session()
    app, code = sign_in_at(first, first, http)
    token = exchange(first, http, app, code).json()["refresh_token"]
    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(lambda i: refresh_at((first, second)[i % 2], first.session(), token), range(50)))
    assert all(answer.status_code in (200, 400) for answer in answers), [answer.text for answer in answers if answer.status_code >= 500][:3]
    successors = {answer.json()["refresh_token"] for answer in answers if answer.status_code == 200}
    assert len(successors) == 1, f"{len(successors)} successors"
    family = first.query("SELECT family_id FROM refresh_tokens WHERE token_hash = ?", token_hash(token))[0][0]
    live = first.query("SELECT count(*) FROM refresh_tokens WHERE family_id = ? AND used_at IS NULL AND revoked_at IS NULL", family)
    assert live == [(1,)], live


def test_reuse_on_one_node_of_a_token_rotated_on_the_other_revokes_the_family(fresh_url):
    first = Stack(extra_env=dict(node_env(fresh_url), GATEHOUSE_REFRESH_GRACE="0")).start()
    second = another_node(first, fresh_url)
    try:
        http = first.session()
        app, code = sign_in_at(first, first, http)
        spent = exchange(first, http, app, code).json()["refresh_token"]
        successor = refresh_at(first, http, spent).json()["refresh_token"]
        time.sleep(1.1)
        reused = refresh_at(second, http, spent)
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        assert refresh_at(first, http, successor).status_code == 400, "the whole family is revoked, on every node"
        log = open(os.path.join(second.home, "log", "token.log"), encoding="utf-8").read()
        assert "refresh token reuse detected" in log
    finally:
        second.remove()
        first.remove()


def test_ssoctl_on_one_node_acts_on_all(nodes):
    first, second = nodes
    added = second.ssoctl("user", "add", "node-two@example.com", "--name", "Two", "--password-stdin", input="a long password 2\n")
    assert added.returncode == 0, added.stderr
    listed = first.ssoctl("user", "list")
    assert "node-two@example.com" in listed.stdout, listed.stdout


def test_a_responder_with_another_master_key_refuses_to_start(nodes, tmp_path):
    """As systemd starts one (no `ssoctl setup` first): a listening socket on
    fd 0, the first node's configuration, a master key of its own."""
    first, _ = nodes
    home = tmp_path / "home"
    (home / "keys").mkdir(parents=True, mode=0o700)
    key = home / "keys" / "master.key"
    key.write_text(base64.urlsafe_b64encode(os.urandom(32)).rstrip(b"=").decode() + "\n")
    key.chmod(0o600)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(tmp_path / "token.sock"))
        listener.listen()
        result = subprocess.run([os.path.join(os.environ["BIN_DIR"], "token")], stdin=listener.fileno(), capture_output=True,
                                text=True, env=dict(first.env, GATEHOUSE_HOME=str(home)), timeout=30)
    assert result.returncode != 0
    assert "every node needs a copy of the first node's master key" in result.stdout + result.stderr


class RefreshChains:
    """Apps refreshing in a loop against some nodes, recording every
    successor a 200 acknowledged and every status seen."""

    def __init__(self, first, targets, count=4):
        self.first, self.targets, self.stop = first, targets, threading.Event()
        self.acknowledged, self.statuses, self.lock = [], [], threading.Lock()
        self.tokens = []
        for _ in range(count):  # one browser each: a shared cookie jar would skip the login page
            http = first.session()
            app, code = sign_in_at(first, first, http)
            self.tokens.append(exchange(first, http, app, code).json()["refresh_token"])
        self.threads = [threading.Thread(target=self.run, args=(index,)) for index in range(count)]

    def run(self, index):
        http, token, turn = self.first.session(), self.tokens[index], index
        while not self.stop.is_set():
            node = self.targets()[turn % len(self.targets())]
            turn += 1
            try:
                answer = refresh_at(node, http, token)
            except Exception:
                time.sleep(0.05)  # a node being killed drops its connections
                continue
            with self.lock:
                self.statuses.append(answer.status_code)
            if answer.status_code == 200:
                token = answer.json()["refresh_token"]
                with self.lock:
                    self.acknowledged.append(token)
            else:
                time.sleep(0.05)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_):
        self.stop.set()
        for thread in self.threads:
            thread.join(30)

    def missing(self, query_node):
        return [token for token in self.acknowledged
                if query_node.query("SELECT count(*) FROM refresh_tokens WHERE token_hash = ?", token_hash(token)) != [(1,)]]


def test_a_node_killed_with_sigkill_under_load_loses_nothing(fresh_url):
    first = Stack(extra_env=node_env(fresh_url)).start()
    second = another_node(first, fresh_url)
    try:
        alive = [first, second]
        with RefreshChains(first, lambda: alive) as load:
            time.sleep(3)
            os.killpg(first.process.pid, signal.SIGKILL)
            alive = [second]
            served_before = len(load.acknowledged)
            time.sleep(4)
        assert len(load.acknowledged) > served_before + 10, "the second node kept serving"
        assert 500 not in load.statuses and 502 not in load.statuses[-20:], load.statuses[-20:]
        assert load.missing(second) == [], "every acknowledged successor is in the database"
        assert refresh_at(second, second.session(), load.acknowledged[-1]).status_code in (200, 400)
    finally:
        second.remove()
        first.stop(signal.SIGKILL)
        first.remove()


def test_the_primary_killed_under_load_fails_over_to_its_standby_with_nothing_lost():
    primary = pg_cluster.new_cluster()
    standby = primary.standby()
    url = (f"postgresql://{pg_cluster.ROLE}@127.0.0.1:{primary.port},127.0.0.1:{standby.port}/{pg_cluster.DATABASE}"
           "?target_session_attrs=read-write")
    first = Stack(extra_env=node_env(url)).start()
    second = another_node(first, url)
    try:
        with RefreshChains(first, lambda: [first, second]) as load:
            time.sleep(3)
            primary.kill()
            killed_at = len(load.acknowledged)
            standby.promote()
            time.sleep(8)
        assert killed_at > 0
        assert len(load.acknowledged) > killed_at + 10, "both nodes reconnected to the new primary without a restart"
        assert set(load.statuses) <= {200, 400, 503}, set(load.statuses)
        assert load.missing(first) == [], "nothing acknowledged before the kill is missing on the new primary"
    finally:
        second.remove()
        first.remove()
        standby.remove()
        primary.remove()


def test_an_outage_answers_503_with_retry_after_and_every_responder_recovers(cluster, fresh_url):
    first = Stack(extra_env=node_env(fresh_url)).start()
    try:
        http = first.session()
        app, code = sign_in_at(first, first, http)
        tokens = exchange(first, http, app, code).json()
        pids = {name: first.pid(name) for name in ("token-0", "jwks-0", "authorize-0")}
        cluster.stop()
        try:
            started = time.time()
            refused = refresh_at(first, http, tokens["refresh_token"])
            assert time.time() - started < 10, "never a hang over 10 s"
            assert refused.status_code == 503 and refused.headers["Retry-After"], refused.text
            assert App(first, first.session()).authorize().status_code == 503
            # What does not need the database keeps answering.
            assert http.get(first.issuer + "/.well-known/openid-configuration").status_code == 200
            assert http.get(first.issuer + "/.well-known/jwks.json").status_code == 200
            api = http.get(first.api_a + "/api/data", headers={"Authorization": "Bearer " + tokens["access_token"]})
            assert api.status_code == 200, api.text
            # The ops listener: not ready, within the same 10 s, saying why; still live.
            started = time.time()
            ready = requests.get(first.ops + "/health/ready", timeout=15)
            assert time.time() - started < 10 and ready.status_code == 503, ready.text
            assert ready.json()["reason"].startswith("database write failed"), ready.text
            assert requests.get(first.ops + "/health/live", timeout=15).status_code == 200
        finally:
            cluster.start()
        deadline, answer = time.time() + 20, refused
        while time.time() < deadline and answer.status_code == 503:
            time.sleep(0.5)
            answer = refresh_at(first, http, tokens["refresh_token"])
        assert answer.status_code == 200, f"recovered without a restart: {answer.status_code} {answer.text}"
        assert {name: first.pid(name) for name in pids} == pids, "the same processes"
        assert requests.get(first.ops + "/health/ready", timeout=15).status_code == 200
    finally:
        first.remove()


def test_a_pg_dump_backup_restores_to_an_issuer_that_honours_its_tokens(fresh_url, cluster, tmp_path):
    """deploy/bin/gatehouse-backup with GATEHOUSE_DATABASE_URL: pg_dump plus
    keys/master.key; pg_restore into an empty database and a node given the
    backup's master key is the same issuer (same signing keys, and a refresh
    token from before the backup still rotates)."""
    first = Stack(extra_env=node_env(fresh_url)).start()
    restored = None
    try:
        http = first.session()
        app, code = sign_in_at(first, first, http)
        tokens = exchange(first, http, app, code).json()
        keys_before = first.ssoctl("keys", "list").stdout
        backups = tmp_path / "backups"
        backups.mkdir()
        result = subprocess.run([os.path.join(ROOT, "deploy", "bin", "gatehouse-backup")], capture_output=True, text=True,
                                env=dict(first.env, GATEHOUSE_BACKUP_DIR=str(backups)), timeout=120)
        assert result.returncode == 0, result.stderr
        [backup] = list(backups.iterdir())
        assert sorted(path.name for path in backup.iterdir()) == ["SHA256SUMS", "gatehouse.pgdump", "keys"]
        assert (backup / "keys" / "master.key").stat().st_mode & 0o077 == 0
        assert subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=backup).returncode == 0
        first.stop()

        target = database.create_database(cluster.url)
        loaded = subprocess.run(["pg_restore", "--no-owner", "--exit-on-error", "--dbname", target, str(backup / "gatehouse.pgdump")],
                                capture_output=True, text=True, timeout=120)
        assert loaded.returncode == 0, loaded.stderr
        restored = another_node(first, target, keys=str(backup / "keys"))
        assert restored.ssoctl("keys", "list").stdout == keys_before
        rotated = refresh_at(restored, http, tokens["refresh_token"])
        assert rotated.status_code == 200, rotated.text
    finally:
        if restored:
            restored.remove()
        first.remove()
