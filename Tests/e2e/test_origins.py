"""GATEHOUSE_ISSUER and the other origins in the Scripts/run layout: an
origin Scripts/run can serve (a host that resolves to this machine's
loopback, on its role's port) is applied everywhere: banner, certificate,
nginx, the interstitial page's link, and the APIs fetch the JWKS from it.
Any other is refused before anything starts, with one line naming the
variable. (A real-looking domain used to give an API that answered 503
forever: it fetched the JWKS from a host that was not there.)

The supported case needs names that resolve to 127.0.0.1: Scripts/run runs
in a private mount namespace (`unshare --mount`) whose /etc/hosts maps them,
and the test's own requests use curl --resolve, so the machine's /etc/hosts
is never touched."""
import json
import os
import shutil
import signal
import subprocess

import pytest

from stack import ROOT, Stack
from test_resource_servers import mint


def refused(extra_env):
    stack = Stack(extra_env={})
    try:
        environment = dict(stack.env, **{name: value.format(base=stack.base) for name, value in extra_env.items()})
        process = subprocess.Popen([os.path.join(ROOT, "Scripts", "run")], env=environment, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT, start_new_session=True)
        try:
            stdout, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:  # it started after all: stop all it started
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        assert not os.path.exists(os.path.join(stack.home, "run")), "refused before anything started"
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), stack.base
    finally:
        stack.remove()


@pytest.mark.parametrize("variable, value, reason", [
    ("GATEHOUSE_API_A_ORIGIN", "https://localhost:{base}",
     "Scripts/run serves api-a on port {api_a} (GATEHOUSE_BASE_PORT + 1), not {base}; use https://localhost:{api_a} "
     "or move GATEHOUSE_BASE_PORT"),
    ("GATEHOUSE_API_B_ORIGIN", "https://10.1.2.3:{base}",
     "10.1.2.3 resolves to 10.1.2.3, where Scripts/run's nginx does not listen (127.0.0.1 and ::1 only); map it to "
     "127.0.0.1 in /etc/hosts, or deploy with docs/DEPLOY.md for a real domain"),
    ("GATEHOUSE_APP_LINKS_ORIGIN", "https://localhost:{base}/callback", "expected https://HOST:PORT (no path, no trailing slash)"),
], ids=["another role's port", "an address nginx does not listen on", "a path"])
def test_an_origin_scripts_run_cannot_serve_is_refused_with_one_line_naming_it(variable, value, reason):
    result, base = refused({variable: value})
    value = value.format(base=base)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"gatehouse: error: {variable}={value}: " + reason.format(base=base, api_a=base + 1)], result.stderr


def test_a_real_domain_for_the_issuer_is_refused():
    result, _ = refused({"GATEHOUSE_ISSUER": "https://login.example.com"})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    # Without DNS it does not resolve; with DNS, to an address nginx does not listen on.
    assert line.startswith("gatehouse: error: GATEHOUSE_ISSUER=https://login.example.com: login.example.com "), line
    assert "127.0.0.1" in line and ("does not resolve" in line or "where Scripts/run's nginx does not listen" in line), line


def curl(url, ca, *arguments):
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    result = subprocess.run(["curl", "-sS", "--cacert", ca, "--resolve", f"{host}:{port}:127.0.0.1", "-w", "\n%{http_code}",
                             *arguments, url], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr  # TLS verified against the stack's CA, by name
    body, _, status = result.stdout.rpartition("\n")
    return int(status), body


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="a private mount namespace needs root")
def test_origins_on_names_that_resolve_to_loopback_are_applied_everywhere(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost login.gatehouse.test api-a.gatehouse.test links.gatehouse.test\n")
    hosts.chmod(0o644)
    mount_hosts = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts)]
    stack = Stack(command_prefix=mount_hosts)
    stack.issuer = f"https://login.gatehouse.test:{stack.base}"
    stack.api_a = f"https://api-a.gatehouse.test:{stack.base + 1}"
    stack.api_b = f"https://127.0.0.1:{stack.base + 2}"
    stack.app_links = f"https://links.gatehouse.test:{stack.base + 3}"
    stack.env.update(GATEHOUSE_ISSUER=stack.issuer, GATEHOUSE_API_A_ORIGIN=stack.api_a, GATEHOUSE_API_B_ORIGIN=stack.api_b,
                     GATEHOUSE_APP_LINKS_ORIGIN=stack.app_links)
    try:
        stack.start()
        banner = stack.log()
        for label, origin in (("issuer", stack.issuer), ("api-a", stack.api_a), ("api-b", stack.api_b),
                              ("app links", stack.app_links)):
            assert f"  {label.ljust(15)} {origin}" in banner, banner

        status, body = curl(stack.issuer + "/.well-known/openid-configuration", stack.ca)
        assert status == 200 and json.loads(body)["issuer"] == stack.issuer
        names = subprocess.run(["openssl", "x509", "-in", stack.ca.replace("ca.pem", "server.pem"), "-noout", "-ext",
                                "subjectAltName"], capture_output=True, text=True, check=True).stdout
        for name in ("DNS:login.gatehouse.test", "DNS:api-a.gatehouse.test", "DNS:links.gatehouse.test", "IP Address:127.0.0.1"):
            assert name in names, names
        with open(os.path.join(stack.home, "nginx", "nginx.conf")) as handle:
            assert "server_name localhost login.gatehouse.test;" in handle.read()

        # The APIs fetch the JWKS from the issuer origin: a token it signed is accepted.
        token = mint(stack)
        status, body = curl(stack.api_a + "/api/data", stack.ca, "-H", f"Authorization: Bearer {token}")
        assert status == 200, body
        assert json.loads(body)["user"] == "alice@example.com"
        status, body = curl(stack.api_b + "/api/records", stack.ca, "-H", f"Authorization: Bearer {token}")
        assert status == 200, body

        status, page = curl(stack.issuer + "/mobile/postlogin.html?code=c&state=s", stack.ca)
        assert status == 200 and f'href="{stack.app_links}/callback?code=c&amp;state=s"' in page, page
    finally:
        stack.remove()
