"""The ops listener and the audit log on the real stack: /metrics summed
over every responder process, /health/live and /health/ready, and one JSON
line per security event in log/audit.log (never a secret)."""
import json
import os
import re
import signal
import stat
import time

import requests

from oidc_flow import App
from stack import DEMO_PASSWORD
from test_account_security import ACCOUNT_LIMIT, client, error_of, fresh_address, new_user, post_password, start
from test_native_sso import DEVICE_SECRET, exchange, sign_in_app1


def ops(stack, path):
    return requests.get(stack.ops + path, timeout=15)


def metrics(stack):
    """Every sample of /metrics: {'name{labels}': value}."""
    response = ops(stack, "/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    samples = {}
    for line in response.text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
    return samples


def value(stack, series):
    return metrics(stack).get(series, 0.0)


def audit_lines(stack):
    with open(os.path.join(stack.home, "log", "audit.log"), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def new_audit_lines(stack, before):
    """The audit lines written since `before` lines were there; waits up to
    2 s for the last one (the responder writes after it answers)."""
    deadline = time.time() + 2
    while True:
        lines = audit_lines(stack)[before:]
        if lines or time.time() > deadline:
            return lines
        time.sleep(0.05)


def wait_for(predicate, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_the_ops_listener_is_plain_http_on_loopback_and_serves_only_its_three_paths(stack):
    with open(os.path.join(stack.home, "nginx", "nginx.conf")) as handle:
        config = handle.read()
    assert f"listen 127.0.0.1:{stack.base + 4};" in config
    assert ops(stack, "/").status_code == 404
    assert ops(stack, "/.well-known/openid-configuration").status_code == 404
    assert requests.post(stack.ops + "/metrics", timeout=5).status_code == 405


def test_health_live_and_ready_answer_200_with_every_pool_and_check_named(stack):
    live = ops(stack, "/health/live")
    assert live.status_code == 200 and live.json()["status"] == "live", live.text
    pools = live.json()["checks"]
    for pool in ("discovery", "jwks", "authorize", "login", "token", "userinfo", "logout", "revoke", "introspect", "par", "ops", "admin",
                 "api-a", "api-b"):
        assert pools.get(pool) == "ok", (pool, pools)
    ready = ops(stack, "/health/ready")
    assert ready.status_code == 200, ready.text
    assert ready.json()["status"] == "ready" and ready.json()["checks"]["database_write"] == "ok"
    assert ready.json()["checks"]["signing_key"].startswith("ok (")
    # A real write: this node's row in readiness_probes moved.
    assert len(stack.rows("readiness_probes")) == 1 and stack.rows("readiness_probes")[0]["written_at"] >= int(time.time()) - 5


def test_every_contract_family_is_exposed_with_bounded_labels(stack):
    text = ops(stack, "/metrics").text
    for family in ("gatehouse_http_requests_total", "gatehouse_http_request_duration_seconds", "gatehouse_tokens_issued_total",
                   "gatehouse_refresh_reuse_detected_total", "gatehouse_refresh_grace_retries_total", "gatehouse_logins_total",
                   "gatehouse_account_locks_total", "gatehouse_dpop_proofs_rejected_total", "gatehouse_signing_key_age_seconds",
                   "gatehouse_ready", "gatehouse_jwks_fetches_total", "gatehouse_access_token_refusals_total",
                   "gatehouse_mail_sent_total", "gatehouse_mail_outbox_due", "gatehouse_mail_outbox_oldest_due_seconds"):
        assert f"# TYPE {family} " in text, family
    # No path, user or client ever becomes a label value.
    assert "alice" not in text and "mobile-app" not in text and "/api/" not in text
    labels = set(re.findall(r'(\w+)="', text))
    assert labels <= {"endpoint", "code", "le", "grant", "result", "reason", "kind"}, labels
    # The mail sender's family: message kinds and results, closed lists both.
    mail_labels = set(re.findall(r'^gatehouse_mail_sent_total\{kind="([^"]*)",result="([^"]*)"\} ', text, re.MULTILINE))
    assert {kind for kind, _ in mail_labels} == {"verification", "password_reset", "invitation", "email_change", "notice", "test", "other"}
    assert {result for _, result in mail_labels} == {"sent", "retry", "failed"}
    # It answers no HTTP: no request series of its own.
    assert 'endpoint="mailer"' not in text


def test_requests_are_summed_over_every_process_of_a_pool(stack, http):
    series = 'gatehouse_http_requests_total{endpoint="discovery",code="200"}'
    before = value(stack, series)
    # no-cache: past nginx's 2-second copy, so every request reaches a responder.
    for _ in range(40):
        assert http.get(stack.issuer + "/.well-known/openid-configuration", headers={"Cache-Control": "no-cache"}).status_code == 200
    # Both discovery processes answered some; the sum is every request.
    assert value(stack, series) == before + 40
    counted = [name for name in os.listdir(os.path.join(stack.home, "metrics")) if name.startswith("discovery-")]
    assert sorted(counted) == ["discovery-0.metrics", "discovery-1.metrics"]
    bucket = metrics(stack)['gatehouse_http_request_duration_seconds_count{endpoint="discovery"}']
    assert bucket >= before + 40


def test_a_restarted_responder_continues_its_counts(stack, http):
    series = 'gatehouse_http_requests_total{endpoint="jwks",code="200"}'
    for _ in range(10):
        http.get(stack.issuer + "/.well-known/jwks.json", headers={"Cache-Control": "no-cache"})
    before = value(stack, series)
    old = stack.pid("jwks-0")
    os.kill(old, signal.SIGKILL)
    assert wait_for(lambda: stack.pid("jwks-0") != old and ops(stack, "/health/live").status_code == 200)
    assert value(stack, series) >= before


def test_a_sign_in_moves_its_counters_and_writes_its_audit_line(stack, http):
    logins = 'gatehouse_logins_total{result="success"}'
    issued = 'gatehouse_tokens_issued_total{grant="authorization_code"}'
    before, issued_before, lines_before = value(stack, logins), value(stack, issued), len(audit_lines(stack))
    app = App(stack, http)
    assert app.exchange(app.sign_in()).status_code == 200
    assert value(stack, logins) == before + 1 and value(stack, issued) == issued_before + 1
    [line] = [line for line in new_audit_lines(stack, lines_before) if line["event"] == "login_success"]
    assert line["user"] == "alice@example.com" and line["client"] == "mobile-app-001" and line["ip"] == "127.0.0.1"
    assert line["sid"] and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["time"])


def test_failures_a_lock_and_an_unknown_name_are_audited_with_their_reason(stack):
    email, password, _ = new_user(stack)
    http = client(stack, fresh_address())
    _, login_page = start(stack, http)
    locks, wrong = value(stack, "gatehouse_account_locks_total"), value(stack, 'gatehouse_logins_total{result="wrong_password"}')
    lines_before = len(audit_lines(stack))
    for _ in range(ACCOUNT_LIMIT):
        assert error_of(post_password(stack, http, login_page, email, "wrong " + password)) == "invalid_credentials"
    assert error_of(post_password(stack, http, login_page, email, password)) == "too_many_attempts"
    typed = "nobody-" + password + "@example.com"
    post_password(stack, http, login_page, typed, "whatever")
    assert value(stack, "gatehouse_account_locks_total") == locks + 1
    assert value(stack, 'gatehouse_logins_total{result="wrong_password"}') == wrong + ACCOUNT_LIMIT
    lines = new_audit_lines(stack, lines_before)
    mine = [line for line in lines if line.get("user") == email]
    assert [(line["event"], line.get("reason")) for line in mine] == (
        [("login_failure", "wrong_password")] * ACCOUNT_LIMIT + [("account_locked", None), ("login_failure", "locked")])
    unknown = [line for line in lines if line.get("reason") == "unknown_user"]
    assert len(unknown) == 1 and unknown[0]["user"] is None and unknown[0]["client"] == "mobile-app-001"
    # The name typed for an unknown account is never written: people type passwords there.
    with open(os.path.join(stack.home, "log", "audit.log"), encoding="utf-8") as handle:
        assert password not in handle.read()


def test_refresh_reuse_grace_retry_exchange_and_logout_are_counted_and_audited(stack, http):
    reuse, grace = value(stack, "gatehouse_refresh_reuse_detected_total"), value(stack, "gatehouse_refresh_grace_retries_total")
    exchanged = value(stack, 'gatehouse_tokens_issued_total{grant="token_exchange"}')
    lines_before = len(audit_lines(stack))
    tokens = sign_in_app1(stack, http)
    form = {"grant_type": "refresh_token", "client_id": "mobile-app-001", "refresh_token": tokens["refresh_token"]}
    first = http.post(stack.issuer + "/token", data=form)
    assert first.status_code == 200
    # A retry of the spent token within the grace window: the same successor.
    assert http.post(stack.issuer + "/token", data=form).json()["refresh_token"] == first.json()["refresh_token"]
    assert value(stack, "gatehouse_refresh_grace_retries_total") == grace + 1
    # The successor used, then the spent token again: reuse, family revoked.
    assert http.post(stack.issuer + "/token", data={**form, "refresh_token": first.json()["refresh_token"]}).status_code == 200
    assert http.post(stack.issuer + "/token", data=form).status_code == 400
    assert value(stack, "gatehouse_refresh_reuse_detected_total") == reuse + 1

    browser = stack.session()  # a new sign-in, not the first one's SSO cookie
    tokens = sign_in_app1(stack, browser)
    assert exchange(stack, tokens["id_token"], tokens["device_secret"], DEVICE_SECRET).status_code == 200
    assert value(stack, 'gatehouse_tokens_issued_total{grant="token_exchange"}') == exchanged + 1
    logout = browser.get(stack.issuer + "/logout", params={"id_token_hint": tokens["id_token"]}, allow_redirects=False)
    assert logout.status_code in (200, 303), logout.text

    events = {}
    for line in new_audit_lines(stack, lines_before):
        events.setdefault(line["event"], []).append(line)
    [reused] = events["refresh_reuse_detected"]
    assert reused["user"] == "alice@example.com" and reused["client"] == "mobile-app-001" and reused["target"].startswith("family ")
    [exchange_line] = events["token_exchange"]
    assert exchange_line["client"] == "mobile-app-002" and exchange_line["target"] == "from client mobile-app-001"
    assert exchange_line["user"] == "alice@example.com" and exchange_line["sid"]
    assert any(line["sid"] == exchange_line["sid"] and line["user"] == "alice@example.com" for line in events["logout"])
    text = json.dumps(audit_lines(stack))
    for secret in (tokens["refresh_token"], tokens["access_token"], tokens["id_token"], tokens["device_secret"], DEMO_PASSWORD):
        assert secret not in text


def test_the_resource_servers_count_refusals_by_code(stack, http):
    series = 'gatehouse_access_token_refusals_total{endpoint="api-a",reason="missing_token"}'
    before = value(stack, series)
    for _ in range(3):
        assert http.get(stack.api_a + "/api/data").status_code == 401
    assert value(stack, series) == before + 3
    malformed = 'gatehouse_access_token_refusals_total{endpoint="api-b",reason="malformed_token"}'
    before = value(stack, malformed)
    assert http.get(stack.api_b + "/api/records", headers={"Authorization": "Bearer not.a.jwt"}).status_code == 401
    assert value(stack, malformed) == before + 1


def test_dpop_refusals_are_counted_by_reason(stack, http):
    series = 'gatehouse_dpop_proofs_rejected_total{reason="malformed"}'
    before = value(stack, series)
    response = http.post(stack.issuer + "/token", headers={"DPoP": "not-a-proof"},
                         data={"grant_type": "refresh_token", "client_id": "mobile-app-001", "refresh_token": "x"})
    assert response.status_code == 400 and response.json()["error"] == "invalid_dpop_proof", response.text
    assert value(stack, series) == before + 1


def test_the_audit_log_is_owner_only_and_every_line_has_the_contract_fields(stack):
    path = os.path.join(stack.home, "log", "audit.log")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = audit_lines(stack)
    assert lines
    for line in lines:
        assert {"time", "event"} <= set(line), line
        assert set(line) <= {"time", "event", "user", "client", "ip", "reason", "sid", "actor", "target"}, line


def test_a_pool_with_no_live_process_makes_liveness_fail_until_it_is_back(stack):
    """The supervisor is paused (SIGSTOP) so that it cannot restart the
    killed pool before the probe looks; SIGCONT lets it bring it back."""
    supervisor = stack.process.pid
    os.kill(supervisor, signal.SIGSTOP)
    try:
        for slot in ("revoke-0", "revoke-1"):
            os.kill(stack.pid(slot), signal.SIGKILL)
        assert wait_for(lambda: ops(stack, "/health/live").status_code == 503, timeout=5)
        down = ops(stack, "/health/live").json()
        assert down["status"] == "down" and down["reason"] == "not answering: revoke", down
        assert down["checks"]["token"] == "ok"
    finally:
        os.kill(supervisor, signal.SIGCONT)
    assert wait_for(lambda: ops(stack, "/health/live").status_code == 200, timeout=15)
