"""The monitoring assets in deploy/monitoring/ against the real thing.

- promtool accepts the alerting rules and the example Prometheus config, and
  the rules' unit tests (gatehouse-alerts.test.yml) pass.
- A real Prometheus (Debian's `prometheus`, started here with a temporary
  config, data directory and port, never the system service) scrapes the
  stack's ops listener every second: the target is up, a sign-in
  (authorize → login → token) moves the request, sign-in and token counters
  it reads, every metric family arrives, every alert rule evaluates without
  an error, and every query of the Grafana dashboard runs.
- The rules and the dashboard name only metrics /metrics exposes.

Prometheus's config is the shipped prometheus.yml with the target, the
intervals and the rule file's path changed, so the shipped scrape job is the
one tested.
"""
import json
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
import yaml  # PyYAML: installed with schemathesis (Scripts/lib/common.sh PYTHON_MODULES)

from listening_ports import free_port
from oidc_flow import App, query

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
ALERTS = MONITORING / "gatehouse-alerts.yml"
ALERT_TESTS = MONITORING / "gatehouse-alerts.test.yml"
PROMETHEUS_CONFIG = MONITORING / "prometheus.yml"
DASHBOARD = MONITORING / "grafana-dashboard.json"

# Every family of the ops listener's /metrics (docs/DEPLOY.md section 14).
COUNTERS = ["gatehouse_http_requests_total", "gatehouse_tokens_issued_total", "gatehouse_refresh_reuse_detected_total",
            "gatehouse_refresh_grace_retries_total", "gatehouse_logins_total", "gatehouse_account_locks_total",
            "gatehouse_logouts_total", "gatehouse_dpop_proofs_rejected_total", "gatehouse_jwks_fetches_total",
            "gatehouse_access_token_refusals_total", "gatehouse_mail_sent_total"]
HISTOGRAM = "gatehouse_http_request_duration_seconds"
GAUGES = ["gatehouse_ready", "gatehouse_signing_key_age_seconds", "gatehouse_mail_outbox_due",
          "gatehouse_mail_outbox_oldest_due_seconds"]
HISTOGRAM_SERIES = [HISTOGRAM + suffix for suffix in ("_bucket", "_sum", "_count")]
METRIC_NAME = re.compile(r"\bgatehouse_[a-z_]+\b")


def tool(name):
    path = shutil.which(name)
    assert path, f"{name} is not installed: apt-get install prometheus (Scripts/lib/common.sh TEST_PACKAGES)"
    return path


# ---------------------------------------------------------------- the files

def rule_expressions():
    """{alert name: expr} of gatehouse-alerts.yml."""
    rules = {}
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            rules[rule.get("alert") or rule.get("record")] = rule["expr"]
    return rules


def dashboard_panels():
    """Every panel of the dashboard, those inside rows included."""
    panels = []
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        panels.append(panel)
        panels += panel.get("panels", [])
    return panels


def dashboard_expressions():
    """(panel title, expr) of every panel target of the dashboard."""
    return [(panel["title"], target["expr"]) for panel in dashboard_panels() for target in panel.get("targets", [])]


def exposed_names(text):
    """The series names an exposition offers: each sample's name, plus every
    family its # TYPE lines declare (a per-endpoint family has no sample
    until a resource server counts one), a histogram as its three series."""
    names = set()
    for line in text.splitlines():
        declared = re.match(r"# TYPE (\S+) (\S+)", line)
        if declared:
            name, kind = declared.groups()
            names.update([name + suffix for suffix in ("_bucket", "_sum", "_count")] if kind == "histogram" else [name])
        elif line and not line.startswith("#"):
            names.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return names


def test_promtool_accepts_the_alert_rules():
    result = subprocess.run([tool("promtool"), "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(rule_expressions())} rules found" in result.stdout, result.stdout


def test_promtool_accepts_the_example_prometheus_config(tmp_path):
    """The shipped file, with its rule file found where this checkout has it."""
    text = PROMETHEUS_CONFIG.read_text()
    assert "/etc/prometheus/gatehouse-alerts.yml" in text
    config = tmp_path / "prometheus.yml"
    config.write_text(text.replace("/etc/prometheus/gatehouse-alerts.yml", str(ALERTS)))
    result = subprocess.run([tool("promtool"), "check", "config", str(config)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 1 rule files found" in result.stdout + result.stderr, result.stdout + result.stderr


def test_the_alert_rules_unit_tests_pass():
    result = subprocess.run([tool("promtool"), "test", "rules", str(ALERT_TESTS)], capture_output=True, text=True,
                            timeout=120, cwd=MONITORING)
    assert result.returncode == 0, result.stdout + result.stderr
    tested = set(re.findall(r"alertname:\s*(\S+)", ALERT_TESTS.read_text()))
    assert {"GatehouseNotReady", "GatehouseScrapeDown", "GatehouseRefreshTokenReuseSpike"} <= tested, tested
    assert tested <= set(rule_expressions()), f"tests of alerts that do not exist: {tested - set(rule_expressions())}"


def test_the_rules_cover_the_operational_signals_and_the_scrape_job_they_name():
    rules = rule_expressions()
    text = "\n".join(rules.values())
    for needed in ["gatehouse_refresh_reuse_detected_total", "gatehouse_account_locks_total", "gatehouse_logins_total",
                   "gatehouse_ready", "gatehouse_signing_key_age_seconds", "gatehouse_http_requests_total",
                   "gatehouse_http_request_duration_seconds_bucket", "gatehouse_dpop_proofs_rejected_total",
                   "gatehouse_jwks_fetches_total", "up{"]:
        assert needed in text, f"no alert rule uses {needed}"
    jobs = set(re.findall(r'up\{job="([^"]+)"\}', text))
    shipped = {job["job_name"] for job in yaml.safe_load(PROMETHEUS_CONFIG.read_text())["scrape_configs"]}
    assert jobs and jobs <= shipped, f"the rules' up{{job=...}} {jobs} vs prometheus.yml's jobs {shipped}"
    for group in yaml.safe_load(ALERTS.read_text())["groups"]:
        for rule in group["rules"]:
            assert rule["labels"]["severity"] in ("warning", "critical"), rule["alert"]
            assert rule["annotations"].get("summary") and rule["annotations"].get("description"), rule["alert"]


def test_the_dashboard_is_grafana_json_with_a_datasource_variable_and_every_panel():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["schemaVersion"] >= 39 and dashboard["uid"] and dashboard["title"]
    variables = {variable["name"]: variable for variable in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    panels = dashboard_panels()
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids)), "two panels share an id"
    for panel in panels:
        if panel["type"] == "row":
            continue
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
    used = "\n".join(expr for _, expr in dashboard_expressions())
    for family in COUNTERS + GAUGES + [HISTOGRAM + "_bucket"]:
        assert family in used, f"no dashboard panel shows {family}"
    titles = " | ".join(panel["title"] for panel in panels).lower()
    for words in ("requests/s by endpoint", "5xx", "p50", "p99", "tokens issued", "sign-ins", "account locks",
                  "refresh", "dpop", "refusals", "jwks", "ready", "signing key age", "mail sent", "outbox backlog"):
        assert words in titles, f"no panel about {words}: {titles}"
    assert "histogram_quantile(0.5," in used and "histogram_quantile(0.99," in used


# ---------------------------------------------------------------- against the running stack

def test_the_rules_and_the_dashboard_name_only_metrics_the_ops_listener_exposes(stack):
    response = requests.get(stack.ops + "/metrics", timeout=15)
    assert response.status_code == 200, response.text
    exposed = exposed_names(response.text)
    for family in COUNTERS + GAUGES + HISTOGRAM_SERIES:
        assert family in exposed, f"/metrics does not offer {family}"
    for alert, expr in rule_expressions().items():
        unknown = set(METRIC_NAME.findall(expr)) - exposed
        assert unknown == set(), f"alert {alert} names metrics /metrics does not expose: {sorted(unknown)}"
    for title, expr in dashboard_expressions():
        unknown = set(METRIC_NAME.findall(expr)) - exposed
        assert unknown == set(), f"panel {title!r} names metrics /metrics does not expose: {sorted(unknown)}"
    for variable in json.loads(DASHBOARD.read_text())["templating"]["list"]:
        unknown = set(METRIC_NAME.findall(json.dumps(variable.get("query", "")))) - exposed
        assert unknown == set(), f"variable {variable['name']} names {sorted(unknown)}"


class Prometheus:
    def __init__(self, url):
        self.url = url

    def api(self, path, **params):
        response = requests.get(self.url + "/api/v1/" + path, params=params, timeout=10)
        body = response.json()
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr):
        return self.api("query", query=expr)["result"]

    def value(self, expr):
        """The one value of an instant query; 0 when it has no series (yet)."""
        result = self.query(expr)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else 0.0


def wait_until(condition, timeout, interval=0.25):
    deadline = time.time() + timeout
    while True:
        outcome = condition()
        if outcome or time.time() > deadline:
            return outcome
        time.sleep(interval)


@pytest.fixture(scope="module")
def prometheus(stack):
    """A Prometheus of this module's own scraping the stack's ops listener
    every second with the shipped job and rules; stopped in the end."""
    binary = tool("prometheus")
    directory = Path(tempfile.mkdtemp(prefix="gatehouse-prometheus-"))
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    config["global"].update(scrape_interval="1s", evaluation_interval="1s")
    config["rule_files"] = [str(ALERTS)]
    config.pop("alerting", None)  # no Alertmanager here
    [job] = [job for job in config["scrape_configs"] if job["job_name"] == "gatehouse"]
    job.update(scrape_interval="1s", scrape_timeout="1s")
    job["static_configs"][0]["targets"] = [urlsplit(stack.ops).netloc]
    config["scrape_configs"] = [job]
    (directory / "prometheus.yml").write_text(yaml.safe_dump(config))
    url = f"http://127.0.0.1:{free_port()}"
    log = open(directory / "prometheus.log", "w")
    process = subprocess.Popen([binary, f"--config.file={directory / 'prometheus.yml'}",
                                f"--storage.tsdb.path={directory / 'data'}", f"--web.listen-address={urlsplit(url).netloc}"],
                               stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        def ready():
            assert process.poll() is None, (directory / "prometheus.log").read_text()[-3000:]
            try:
                return requests.get(url + "/-/ready", timeout=2).status_code == 200
            except requests.ConnectionError:
                return False
        assert wait_until(ready, 30), "Prometheus did not become ready:\n" + (directory / "prometheus.log").read_text()[-3000:]
        yield Prometheus(url)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
        shutil.rmtree(directory, ignore_errors=True)


def gatehouse_target(prometheus):
    """The gatehouse job's one target; None until service discovery has run
    (Prometheus applies its first target list about 5 s after it starts)."""
    targets = [target for target in prometheus.api("targets")["activeTargets"] if target["labels"]["job"] == "gatehouse"]
    assert len(targets) <= 1, targets
    return targets[0] if targets else None


def scraped(prometheus):
    """Waits until the gatehouse target has been scraped successfully."""
    assert wait_until(lambda: (gatehouse_target(prometheus) or {}).get("health") == "up", 30), gatehouse_target(prometheus)


def test_prometheus_scrapes_the_ops_listener(stack, prometheus):
    scraped(prometheus)
    target = gatehouse_target(prometheus)
    assert target["scrapeUrl"] == stack.ops + "/metrics"
    assert wait_until(lambda: prometheus.value('up{job="gatehouse"}') == 1, 10)
    assert wait_until(lambda: prometheus.value("gatehouse_ready") == 1, 10)


def sign_in(stack, http):
    """A user of this test's own through authorize → login → token; the tokens."""
    email, password = f"monitoring-{secrets.token_hex(4)}@example.com", "a long monitoring password"
    added = stack.ssoctl("user", "add", email, "--name", "Monitoring Test", "--password-stdin", input=password + "\n")
    assert added.returncode == 0, added.stderr
    app = App(stack, http)
    first = app.authorize()
    assert first.status_code == 303 and first.headers["Location"].startswith("/login.html?client_id="), first.text
    second = app.login(first.headers["Location"], email=email, password=password)
    assert second.status_code == 303, second.text
    assert "code" in query(second.headers["Location"]), second.headers["Location"]
    tokens = app.exchange(app.code_from(second))
    assert tokens.status_code == 200, tokens.text
    return tokens.json()


def test_a_sign_in_reaches_prometheus(stack, http, prometheus):
    scraped(prometheus)
    requests_before = prometheus.value("sum(gatehouse_http_requests_total)")
    logins_before = prometheus.value('sum(gatehouse_logins_total{result="success"})')
    tokens_before = prometheus.value('sum(gatehouse_tokens_issued_total{grant="authorization_code"})')
    token_answers_before = prometheus.value('sum(gatehouse_http_requests_total{endpoint="token",code="200"})')

    sign_in(stack, http)

    def moved():
        return (prometheus.value("sum(gatehouse_http_requests_total)") > requests_before
                and prometheus.value('sum(gatehouse_http_requests_total{endpoint="token",code="200"})') > token_answers_before
                and prometheus.value('sum(gatehouse_logins_total{result="success"})') > logins_before
                and prometheus.value('sum(gatehouse_tokens_issued_total{grant="authorization_code"})') > tokens_before)
    assert wait_until(moved, 20), {
        "requests": (requests_before, prometheus.value("sum(gatehouse_http_requests_total)")),
        "token 200": (token_answers_before, prometheus.value('sum(gatehouse_http_requests_total{endpoint="token",code="200"})')),
        "logins success": (logins_before, prometheus.value('sum(gatehouse_logins_total{result="success"})')),
        "tokens authorization_code": (tokens_before,
                                      prometheus.value('sum(gatehouse_tokens_issued_total{grant="authorization_code"})')),
    }


def test_every_metric_family_reaches_prometheus(stack, http, prometheus):
    # The per-endpoint families have series once a resource server counts:
    # a call with a token (its JWKS fetch) and one without (a refusal).
    tokens = sign_in(stack, http)
    assert http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + tokens["access_token"]}).status_code == 200
    assert http.get(stack.api_a + "/api/data").status_code == 401
    expected = set(COUNTERS + GAUGES + HISTOGRAM_SERIES)

    def names():
        return set(prometheus.api("label/__name__/values"))
    assert wait_until(lambda: expected <= names(), 20), f"not in Prometheus: {sorted(expected - names())}"
    assert prometheus.value('sum(gatehouse_jwks_fetches_total{endpoint="api-a",result="ok"})') >= 1
    assert prometheus.value('sum(gatehouse_access_token_refusals_total{endpoint="api-a",reason="missing_token"})') >= 1
    assert prometheus.value("gatehouse_signing_key_age_seconds") >= 0


def test_every_alert_rule_evaluates_on_the_real_series(prometheus):
    """Loaded by Prometheus from the shipped file and evaluated at least once
    against the stack's series without an error (a many-to-many match, say)."""
    scraped(prometheus)

    def rules():
        return [rule for group in prometheus.api("rules")["groups"] for rule in group["rules"]]

    def evaluated():
        loaded = rules()
        return len(loaded) == len(rule_expressions()) and all(
            rule["health"] != "unknown" and not rule["lastEvaluation"].startswith("0001") for rule in loaded)
    assert wait_until(evaluated, 20), rules()
    broken = [(rule["name"], rule.get("lastError")) for rule in rules() if rule["health"] != "ok"]
    assert broken == [], broken
    # A healthy stack: the availability alerts stay quiet.
    firing = {alert["labels"]["alertname"] for alert in prometheus.api("alerts")["alerts"]}
    assert not firing & {"GatehouseScrapeDown", "GatehouseNotReady"}, firing


def test_every_dashboard_query_runs(prometheus):
    """Grafana's variables filled in as Grafana would; each query must parse
    and run (an empty answer is fine: a family may have no traffic yet)."""
    for title, expr in dashboard_expressions():
        filled = expr.replace("$__rate_interval", "1m").replace("$instance", ".*")
        response = requests.get(prometheus.url + "/api/v1/query", params={"query": filled}, timeout=10).json()
        assert response["status"] == "success", (title, filled, response)
    # The readiness and request panels have data (two scrapes a second apart make a rate).
    scraped(prometheus)
    assert wait_until(lambda: prometheus.query('gatehouse_ready{instance=~".*"}'), 10)
    requests_by_endpoint = 'sum by (endpoint) (rate(gatehouse_http_requests_total{instance=~".*"}[1m]))'
    assert wait_until(lambda: prometheus.query(requests_by_endpoint), 10), prometheus.query("gatehouse_http_requests_total")
