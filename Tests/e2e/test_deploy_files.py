"""The production deployment files in deploy/ parse, and agree with the code.

No running stack (no `stack` fixture): these tests read files, run
`systemd-analyze verify` and `nginx -t` on copies, and start one responder
the way systemd does, in a temporary directory. A few seconds in all.

How the units are verified: `systemd-analyze verify` checks that every
ExecStart= binary exists, and the units name the installed layout
(/usr/lib/gatehouse/bin/...). The units are copied into a temporary
directory with that prefix rewritten to a temporary bin/ holding symlinks to
the real built binaries ($BIN_DIR, as Scripts/test sets it) and copies of
deploy/bin/'s scripts (what the docs install in /usr/lib/gatehouse/bin), so verify checks the real programs without anything
being installed. verify exits 0 on an unknown directive or a value it cannot
parse (it only warns), so any diagnostic it prints fails the test too.

The nginx config is rewritten the same way (certificates: a self-signed one
made here; snippets, logs: the temporary directory) and included in an http
block that sets what Debian's /etc/nginx/nginx.conf sets at http level, so a
directive that would clash with Debian's (duplicate ssl_protocols, say) fails
here as it would on the machine.
"""
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
UNIT_DIR = DEPLOY / "systemd"
NGINX_DIR = DEPLOY / "nginx"
DEPLOY_DOC = ROOT / "docs" / "DEPLOY.md"
BIN_DIR = Path(os.environ.get("BIN_DIR") or ROOT / ".build" / "release")
INSTALLED_BIN = "/usr/lib/gatehouse/bin/"

# Executables of the package that are not deployed as FastCGI responders.
NOT_DEPLOYED = {"hello-fcgi"}  # the benchmark's reference responder (Scripts/bench only)
# Executables deployed as services of their own, not FastCGI pools.
DAEMONS = ["gatehouse-mailer"]  # the mail sender (gatehouse-mailer.service)


# ---------------------------------------------------------------- what the code says

def package_executables():
    text = (ROOT / "Package.swift").read_text()
    return re.findall(r'\.executable\(\s*name:\s*"([^"]+)"', text)


def responders():
    """Executables whose sources run the FastCGI accept loop, minus NOT_DEPLOYED."""
    found = []
    for name in package_executables():
        sources = ROOT / "Sources" / name
        code = "".join(path.read_text() for path in sources.glob("**/*.swift")) if sources.is_dir() else ""
        if ("ResponderProcess.run" in code or "FastCGIServer.serve" in code) and name not in NOT_DEPLOYED:
            found.append(name)
    assert "token" in found and "api-a" in found, f"responder discovery is broken: {found}"
    return sorted(found)


def dev_stack_responders():
    text = (ROOT / "Scripts" / "lib" / "common.sh").read_text()
    names = []
    for variable in ("ISSUER_RESPONDERS", "API_RESPONDERS"):
        match = re.search(rf"^{variable}=\(([^)]*)\)", text, re.MULTILINE)
        assert match, f"{variable} not found in Scripts/lib/common.sh"
        names += match.group(1).split()
    return sorted(names)


def keys_read_by_sources():
    keys = set()
    for path in (ROOT / "Sources").glob("**/*.swift"):
        keys.update(re.findall(r'"(GATEHOUSE_[A-Z0-9_]+)"', path.read_text()))
    return keys


# ---------------------------------------------------------------- what deploy/ says

def target_slots():
    """ENDPOINT-N for every gatehouse@ENDPOINT-N.socket gatehouse.target wants."""
    text = (UNIT_DIR / "gatehouse.target").read_text()
    slots = []
    for line in text.splitlines():
        if line.startswith("Wants="):
            slots += re.findall(r"gatehouse@([^\s]+)\.socket", line)
    return slots


def endpoint_of(slot):
    match = re.fullmatch(r"(.+)-([0-9]{1,2})", slot)
    assert match, f"slot {slot} is not ENDPOINT-N"
    return match.group(1)


def nginx_upstreams():
    text = (NGINX_DIR / "gatehouse.conf").read_text()
    return {name: re.findall(r"server\s+unix:(\S+?);?\s", body + " ")
            for name, body in re.findall(r"upstream\s+(\S+)\s*\{([^}]*)\}", text)}


def nginx_server_blocks(text):
    """The body of every `server { ... }` block of an nginx file (nested
    location blocks included), comments removed."""
    code = re.sub(r"#[^\n]*", "", text)
    blocks = []
    for match in re.finditer(r"(?<![\w-])server\s*\{", code):
        depth, index = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(code[index], 0)
            index += 1
        blocks.append(code[match.end():index - 1])
    return blocks


def ops_server_blocks():
    """The production server blocks that pass requests to the ops responder."""
    text = (NGINX_DIR / "gatehouse.conf").read_text()
    return [block for block in nginx_server_blocks(text) if re.search(r"fastcgi_pass\s+gatehouse_ops;", block)]


def env_file_keys():
    """Keys of deploy/gatehouse.env, set or commented out (`#KEY=value`)."""
    return set(re.findall(r"^#?(GATEHOUSE_[A-Z0-9_]+)=", (DEPLOY / "gatehouse.env").read_text(), re.MULTILINE))


def env_file_values():
    """What systemd's EnvironmentFile= takes from deploy/gatehouse.env."""
    values = {}
    for line in (DEPLOY / "gatehouse.env").read_text().splitlines():
        if re.match(r"^[A-Z_][A-Z0-9_]*=", line):
            key, value = line.split("=", 1)
            values[key] = value
    return values


# ---------------------------------------------------------------- consistency

def test_every_responder_has_a_pool_in_systemd_nginx_and_the_docs():
    expected = responders()
    slots = target_slots()
    assert len(slots) == len(set(slots)), f"a slot is listed twice: {slots}"
    by_endpoint = {}
    for slot in slots:
        by_endpoint.setdefault(endpoint_of(slot), []).append(slot)
    assert sorted(by_endpoint) == expected, "gatehouse.target's sockets and Package.swift's responders differ"

    upstreams = nginx_upstreams()
    for endpoint, endpoint_slots in by_endpoint.items():
        upstream = "gatehouse_" + endpoint.replace("-", "_")
        assert upstream in upstreams, f"no nginx upstream {upstream} for {endpoint}"
        assert sorted(upstreams[upstream]) == sorted(f"/run/gatehouse/{slot}.sock" for slot in endpoint_slots), \
            f"upstream {upstream} and gatehouse.target list different slots"
    assert len(upstreams) == len(by_endpoint), f"an upstream without a systemd pool: {sorted(upstreams)}"

    text = (NGINX_DIR / "gatehouse.conf").read_text()
    passed = set(re.findall(r"fastcgi_pass\s+(\S+);", text))
    assert passed == set(upstreams), f"fastcgi_pass targets {sorted(passed)} vs upstreams {sorted(upstreams)}"

    launcher = (DEPLOY / "bin" / "gatehouse-responder").read_text()
    match = re.search(r'case "\$endpoint" in\s*\n\s*([^)]*)\)', launcher)
    assert match, "the launcher's endpoint list was not found"
    assert sorted(name.strip() for name in match.group(1).split("|")) == expected

    doc = DEPLOY_DOC.read_text()
    for endpoint in expected:
        assert f"`{endpoint}`" in doc, f"docs/DEPLOY.md does not list the responder {endpoint}"


def test_the_deployment_runs_the_same_responders_as_the_dev_stack():
    assert responders() == dev_stack_responders()


def test_fastcgi_keep_alive_only_towards_the_resource_servers():
    """Kept FastCGI connections only where the responders answer GET alone
    (api-a, api-b), each such location retrying any method on the next
    process, and their upstreams keeping idle connections; never an issuer
    endpoint, whose POSTs must not be retried."""
    for path in NGINX_DIR.glob("**/*.conf"):
        text = path.read_text()
        for location in re.finditer(r"location = (\S+) \{(.*?)\n    \}", text, re.DOTALL):
            if re.search(r"fastcgi_keep_conn\s+on", location.group(2)):
                assert location.group(1) in ("/api/data", "/api/records"), (path, location.group(1))
                assert re.search(r"fastcgi_next_upstream error timeout non_idempotent;", location.group(2)), location.group(1)
        for name in ("gatehouse_api_a", "gatehouse_api_b"):
            upstream = re.search(r"upstream %s \{(.*?)\}" % name, text, re.DOTALL)
            if upstream:
                assert re.search(r"keepalive \d+;", upstream.group(1)), name
    production = (NGINX_DIR / "gatehouse.conf").read_text()
    assert len(re.findall(r"fastcgi_keep_conn\s+on", production)) == 2


def test_env_file_names_only_keys_the_code_reads_and_every_config_key():
    read = keys_read_by_sources()
    listed = env_file_keys()
    assert listed - read == set(), f"deploy/gatehouse.env sets keys no code reads: {sorted(listed - read)}"
    config_keys = set(re.findall(r'"(GATEHOUSE_[A-Z0-9_]+)"',
                                 (ROOT / "Sources" / "SSOCore" / "Config" / "GatehouseConfig.swift").read_text()))
    # GATEHOUSE_HOME is set by the units; the base port only picks localhost defaults.
    missing = config_keys - listed - {"GATEHOUSE_HOME", "GATEHOUSE_BASE_PORT"}
    assert missing == set(), f"deploy/gatehouse.env does not mention {sorted(missing)}"


def test_production_nginx_keeps_the_dev_templates_headers_and_locations():
    dev = ROOT / "nginx"
    prod_text = "".join(path.read_text() for path in NGINX_DIR.glob("**/*.conf"))

    def header_lines(text):
        return {line.strip() for line in text.splitlines() if line.strip().startswith("add_header")}

    assert header_lines((dev / "security-headers.conf").read_text()) == \
        header_lines((NGINX_DIR / "snippets" / "gatehouse-security-headers.conf").read_text())
    assert header_lines((dev / "page-headers.conf").read_text()) == \
        header_lines((NGINX_DIR / "snippets" / "gatehouse-page-headers.conf").read_text())
    dev_text = "".join(path.read_text() for path in dev.glob("*"))
    dev_locations = set(re.findall(r"location\s+(=\s*\S+|/\S*)\s*\{", dev_text)) - {"= /bench/hello"}
    prod_locations = set(re.findall(r"location\s+(=\s*\S+|/\S*)\s*\{", prod_text))
    assert dev_locations - prod_locations == set(), "locations of the dev template missing in production"
    for directive in ("client_max_body_size 64k", "limit_req_status 429", "fastcgi_keep_conn off"):
        assert directive in prod_text
    for burst in re.findall(r"limit_req zone=(\w+) burst=(\d+)", dev_text):
        assert f"limit_req zone=gatehouse_{burst[0]} burst={burst[1]} nodelay" in prod_text, burst


def test_the_production_ops_listener_is_plain_http_on_loopback_only():
    """/metrics and /health/* are for this machine's Prometheus, probes and
    scripts: one server block, `listen 127.0.0.1:PORT` and nothing else (no
    wildcard, no IPv6, no TLS, no public host), serving only its three paths."""
    blocks = ops_server_blocks()
    assert len(blocks) == 1, f"the ops upstream is passed to from {len(blocks)} server blocks (expected the ops listener only)"
    block = blocks[0]
    listens = re.findall(r"^\s*listen\s+([^;]+);", block, re.MULTILINE)
    assert listens, "the ops server block has no listen directive"
    for listen in listens:
        address, *parameters = listen.split()
        assert re.fullmatch(r"127\.0\.0\.1:\d{1,5}", address), f"the ops listener listens on {address}, not 127.0.0.1 only"
        assert "ssl" not in parameters and "default_server" not in parameters, listen
    assert re.findall(r"^\s*listen\s+127\.0\.0\.1:(\d+)", block, re.MULTILINE) == ["8447"], \
        "docs, prometheus.yml and the alerts say 127.0.0.1:8447"
    locations = re.findall(r"location\s+([^{]+?)\s*\{", block)
    assert sorted(locations) == sorted(["= /metrics", "= /health/live", "= /health/ready", "/"]), locations
    fallback = re.search(r"location\s+/\s*\{([^}]*)\}", block).group(1)
    assert "return 404" in fallback and "fastcgi_pass" not in fallback

    # No other server serves the ops paths, and the dev template agrees.
    for other in nginx_server_blocks((NGINX_DIR / "gatehouse.conf").read_text()):
        if other != block:
            assert not re.search(r"location\s+[=~^]*\s*/(metrics|health)", other), "an ops path on a public server"
    template = (ROOT / "nginx" / "gatehouse.conf.template").read_text()
    assert re.search(r"listen 127\.0\.0\.1:@@OPS_PORT@@;", template), "the dev template's ops listener moved"


def test_the_ops_port_is_documented_where_it_is_configured():
    doc = DEPLOY_DOC.read_text()
    assert "127.0.0.1:8447" in doc and "GATEHOUSE_OPS_PORT" in doc
    assert "127.0.0.1:8447" in (DEPLOY / "monitoring" / "prometheus.yml").read_text()
    # GATEHOUSE_OPS_PORT is Scripts/run's: the env file names it only as not used in production.
    env_text = (DEPLOY / "gatehouse.env").read_text()
    assert "GATEHOUSE_OPS_PORT" in env_text and "GATEHOUSE_OPS_PORT" not in env_file_keys()


# ---------------------------------------------------------------- systemd

def unit_settings(path, section):
    """KEY=value lines of one [section] of a unit file."""
    settings, current = {}, None
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("["):
            current = line.strip("[]")
        elif current == section and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            settings[key] = value
    return settings


def test_only_nginx_workers_may_connect_to_the_responder_sockets():
    """A socket any local process could open would let it speak FastCGI to a
    responder and set REMOTE_ADDR, Origin and Sec-Fetch-Site itself."""
    socket = unit_settings(UNIT_DIR / "gatehouse@.socket", "Socket")
    service = unit_settings(UNIT_DIR / "gatehouse@.service", "Service")
    assert (socket["SocketUser"], socket["SocketGroup"], socket["SocketMode"]) == (service["User"], "gatehouse-web", "0660")
    doc = DEPLOY_DOC.read_text()
    for step in ("addgroup --system gatehouse-web", "adduser www-data gatehouse-web", "user gatehouse-web gatehouse-web;",
                 "`SocketUser=gatehouse`, `SocketGroup=gatehouse-web`, `SocketMode=0660`"):
        assert step in doc, step


def test_the_audit_log_is_in_a_logs_directory_every_writer_agrees_on():
    """Responders and the key rotation append to /var/log/gatehouse/audit.log:
    systemd makes the directory (gatehouse's, 0700) and, under
    ProtectSystem=strict, writable; the ssoctl wrapper names the same file."""
    service = unit_settings(UNIT_DIR / "gatehouse@.service", "Service")
    assert service["ProtectSystem"] == "strict"
    assert (service["LogsDirectory"], service["LogsDirectoryMode"]) == ("gatehouse", "0700")

    def audit_log(path):
        return re.findall(r"^Environment=GATEHOUSE_AUDIT_LOG=(\S+)$", path.read_text(), re.MULTILINE)

    assert audit_log(UNIT_DIR / "gatehouse@.service") == ["/var/log/gatehouse/audit.log"]
    rotation = unit_settings(UNIT_DIR / "gatehouse-key-rotation.service", "Service")
    assert (rotation["LogsDirectory"], rotation["LogsDirectoryMode"]) == ("gatehouse", "0700")
    assert audit_log(UNIT_DIR / "gatehouse-key-rotation.service") == ["/var/log/gatehouse/audit.log"]
    assert re.search(r"^GATEHOUSE_AUDIT_LOG=/var/log/gatehouse/audit\.log$", (DEPLOY / "sbin" / "ssoctl").read_text(), re.MULTILINE)
    mailer = unit_settings(UNIT_DIR / "gatehouse-mailer.service", "Service")
    assert (mailer["LogsDirectory"], mailer["LogsDirectoryMode"]) == ("gatehouse", "0700")
    assert audit_log(UNIT_DIR / "gatehouse-mailer.service") == ["/var/log/gatehouse/audit.log"]
    # The counter files stay in the home, which is already writable.
    assert "GATEHOUSE_METRICS_DIR" not in "".join(path.read_text() for path in UNIT_DIR.iterdir())


def test_the_mail_sender_is_one_service_of_the_target_stopped_with_sigterm():
    """gatehouse-mailer is no FastCGI pool: one service per machine, wanted by
    gatehouse.target, as gatehouse with the env file; SIGTERM lets it finish
    the message in hand (within libcurl's 30 s bound) before SIGKILL."""
    target = (UNIT_DIR / "gatehouse.target").read_text()
    assert re.search(r"^Wants=gatehouse-mailer\.service$", target, re.MULTILINE)
    mailer = unit_settings(UNIT_DIR / "gatehouse-mailer.service", "Service")
    assert mailer["ExecStart"] == INSTALLED_BIN + "gatehouse-mailer"
    assert (mailer["User"], mailer["Group"], mailer["KillSignal"], mailer["Restart"]) == ("gatehouse", "gatehouse", "SIGTERM", "always")
    assert int(mailer["TimeoutStopSec"].rstrip("s")) > 30
    assert mailer["EnvironmentFile"] == "/etc/gatehouse/gatehouse.env"
    assert mailer["Environment"] != "" and "GATEHOUSE_SLOT=mailer-0" in (UNIT_DIR / "gatehouse-mailer.service").read_text()
    assert "AF_INET" in mailer["RestrictAddressFamilies"], "the SMTP relay is reached over TCP"
    doc = DEPLOY_DOC.read_text()
    for key in ("GATEHOUSE_SMTP_URL", "GATEHOUSE_MAIL_FROM", "SPF", "DKIM", "DMARC", "gatehouse-mailer.service"):
        assert key in doc, key


def test_the_launcher_names_the_slot_and_the_socket_directory(tmp_path):
    """gatehouse-responder exports GATEHOUSE_SLOT (the counter file's name)
    and GATEHOUSE_SOCKET_DIR, the directory gatehouse@.socket listens in."""
    shutil.copyfile(DEPLOY / "bin" / "gatehouse-responder", tmp_path / "gatehouse-responder")
    (tmp_path / "gatehouse-responder").chmod(0o755)
    (tmp_path / "ops").write_text('#!/bin/sh\nprintf "%s %s\\n" "$GATEHOUSE_SLOT" "$GATEHOUSE_SOCKET_DIR"\n')
    (tmp_path / "ops").chmod(0o755)
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GATEHOUSE_")}
    result = subprocess.run([str(tmp_path / "gatehouse-responder"), "ops-1"], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, env=environment, timeout=10)
    assert result.returncode == 0, result.stderr
    slot, socket_dir = result.stdout.split()
    assert slot == "ops-1"
    listen = unit_settings(UNIT_DIR / "gatehouse@.socket", "Socket")["ListenStream"]
    assert listen == f"{socket_dir}/%i.sock"


def installed_layout(tmp_path):
    """tmp/bin standing in for /usr/lib/gatehouse/bin, and the units rewritten to it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Scripts are copied first and binaries linked after, never the other way
    # round: a copy onto an existing symlink would write into $BIN_DIR.
    for script in (DEPLOY / "bin").iterdir():
        shutil.copyfile(script, bin_dir / script.name)
        (bin_dir / script.name).chmod(0o755)
    for name in responders() + DAEMONS + ["ssoctl"]:
        binary = BIN_DIR / name
        assert os.access(binary, os.X_OK), f"{binary} is not built (BIN_DIR={BIN_DIR})"
        assert not (bin_dir / name).exists(), f"deploy/bin/{name} would shadow the built {name}"
        (bin_dir / name).symlink_to(binary)
    unit_dir = tmp_path / "units"
    unit_dir.mkdir()
    for unit in UNIT_DIR.iterdir():
        (unit_dir / unit.name).write_text(unit.read_text().replace(INSTALLED_BIN, str(bin_dir) + "/"))
    return bin_dir, unit_dir


def unit_paths_to_verify(unit_dir):
    """Every unit file; templates through one instance per pool slot."""
    names = []
    for unit in sorted(UNIT_DIR.iterdir()):
        if "@." in unit.name:
            stem, suffix = unit.name.split("@.")
            names += [f"{stem}@{slot}.{suffix}" for slot in target_slots()]
        else:
            names.append(unit.name)
    return [str(unit_dir / name) for name in names]


def test_every_execstart_names_an_installed_program():
    installed = set(responders()) | set(DAEMONS) | {"ssoctl"} | {path.name for path in (DEPLOY / "bin").iterdir()}
    for unit in UNIT_DIR.glob("*.service"):
        for line in unit.read_text().splitlines():
            if re.match(r"Exec\w+=", line):
                program = line.split("=", 1)[1].split()[0].lstrip("-+!@:")
                assert program.startswith(INSTALLED_BIN), f"{unit.name}: {line}"
                assert program[len(INSTALLED_BIN):] in installed, f"{unit.name}: {program} is not installed"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verify_accepts_every_unit(tmp_path):
    _, unit_dir = installed_layout(tmp_path)
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", *unit_paths_to_verify(unit_dir)],
                            capture_output=True, text=True, timeout=30)
    diagnostics = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 0 and diagnostics == [], "\n".join(diagnostics)


def test_the_launcher_refuses_instances_that_are_not_endpoint_slots(tmp_path):
    bin_dir, _ = installed_layout(tmp_path)
    for instance in ("token", "nosuch-1", "api-a", "token-x", "../token-1"):
        result = subprocess.run([str(bin_dir / "gatehouse-responder"), instance], capture_output=True, text=True,
                                stdin=subprocess.DEVNULL, timeout=10)
        assert result.returncode == 2, (instance, result.stderr)
    for script in [*(DEPLOY / "bin").iterdir(), *(DEPLOY / "sbin").iterdir()]:
        assert subprocess.run(["sh", "-n", str(script)]).returncode == 0, script
        assert os.access(script, os.X_OK), f"{script} is not executable"


# ---------------------------------------------------------------- a slot, started as systemd starts it

def _fcgi_record(kind, body, request_id=1):
    return struct.pack(">BBHHBx", 1, kind, request_id, len(body), 0) + body


def _fcgi_params(pairs):
    out = b""
    for key, value in pairs.items():
        key, value = key.encode(), value.encode()
        out += bytes([len(key), len(value)]) + key + value
    return out


def fastcgi_get(socket_path, path):
    """One FastCGI GET over a unix socket; returns (headers text, body bytes)."""
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(10)
        connection.connect(socket_path)
        params = _fcgi_params({"REQUEST_METHOD": "GET", "DOCUMENT_URI": path, "QUERY_STRING": "", "REQUEST_ID": "deploy-test"})
        connection.sendall(_fcgi_record(1, struct.pack(">HB5x", 1, 0)) + _fcgi_record(4, params) + _fcgi_record(4, b"")
                           + _fcgi_record(5, b""))
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    stdout, offset = b"", 0
    while offset + 8 <= len(data):
        _, kind, _, length, padding = struct.unpack(">BBHHB", data[offset:offset + 7])
        if kind == 6:
            stdout += data[offset + 8:offset + 8 + length]
        offset += 8 + length + padding
    head, _, body = stdout.partition(b"\r\n\r\n")
    return head.decode(), body


def production_environment(home):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GATEHOUSE_")}
    environment.update(env_file_values())
    environment["GATEHOUSE_HOME"] = str(home)
    return environment


def test_a_slot_serves_on_the_socket_handed_as_stdin_and_stops_cleanly_on_sigusr1(tmp_path):
    """What gatehouse@discovery-1 does: the launcher gets the listening socket
    on fd 0 (StandardInput=socket) and execs the responder, configured by
    deploy/gatehouse.env; KillSignal=SIGUSR1 ends it with status 0."""
    bin_dir, _ = installed_layout(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    environment = production_environment(home)
    setup = subprocess.run([str(bin_dir / "ssoctl"), "setup", "--app-links-directory", str(home / "applinks")],
                           env=environment, capture_output=True, text=True, timeout=30)
    assert setup.returncode == 0, setup.stderr
    socket_path = str(tmp_path / "discovery-1.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_path)
    listener.listen(16)
    log = open(tmp_path / "discovery.log", "w")
    process = subprocess.Popen([str(bin_dir / "gatehouse-responder"), "discovery-1"], stdin=listener.fileno(),
                               stdout=log, stderr=log, env=environment)
    listener.close()
    try:
        head, body = fastcgi_get(socket_path, "/.well-known/openid-configuration")
        assert "Status: 200" in head or "Status" not in head, head
        assert b'"issuer":"https:\\/\\/sso.example.com"' in body or b'"issuer":"https://sso.example.com"' in body, body[:200]
        process.send_signal(signal.SIGUSR1)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    association = (home / "applinks" / ".well-known" / "apple-app-site-association").read_text()
    assert environment["GATEHOUSE_IOS_BUNDLE_ID"] in association


def start_slot(bin_dir, tmp_path, slot, environment):
    """gatehouse-responder SLOT on a listening socket handed as stdin, as
    systemd starts it; returns (process, socket path)."""
    socket_path = str(tmp_path / f"{slot}.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(socket_path)
    listener.listen(16)
    log = open(tmp_path / f"{slot}.log", "w")
    process = subprocess.Popen([str(bin_dir / "gatehouse-responder"), slot], stdin=listener.fileno(),
                               stdout=log, stderr=log, env=environment)
    listener.close()
    log.close()
    return process, socket_path


def stop_slot(process):
    if process.poll() is None:
        process.send_signal(signal.SIGUSR1)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_ops_slot_sums_the_slots_counter_files_and_answers_ready(tmp_path):
    """ops-1 as systemd starts it, beside discovery-1: each slot counts into
    metrics/ENDPOINT-N.metrics in the home (GATEHOUSE_SLOT from the
    launcher), and ops-1's /metrics sums them; /health/ready writes to the
    database and finds the signing key `ssoctl setup` made."""
    bin_dir, _ = installed_layout(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    environment = production_environment(home)
    setup = subprocess.run([str(bin_dir / "ssoctl"), "setup"], env=environment, capture_output=True, text=True, timeout=30)
    assert setup.returncode == 0, setup.stderr
    discovery, discovery_socket = start_slot(bin_dir, tmp_path, "discovery-1", environment)
    ops, ops_socket = start_slot(bin_dir, tmp_path, "ops-1", environment)
    try:
        head, _ = fastcgi_get(discovery_socket, "/.well-known/openid-configuration")
        assert "Status: 200" in head or "Status" not in head, head
        deadline = time.time() + 10
        while True:
            head, body = fastcgi_get(ops_socket, "/metrics")
            assert "Status: 200" in head or "Status" not in head, head
            if 'gatehouse_http_requests_total{endpoint="discovery",code="200"} 1' in body.decode():
                break
            assert time.time() < deadline, body.decode()[:2000]
            time.sleep(0.1)
        assert "gatehouse_ready 1" in body.decode()
        head, body = fastcgi_get(ops_socket, "/health/ready")
        assert "Status: 200" in head or "Status" not in head, (head, body)
        assert b'"status":"ready"' in body
    finally:
        stop_slot(discovery)
        stop_slot(ops)
    files = sorted(path.name for path in (home / "metrics").iterdir())
    assert "discovery-1.metrics" in files and "ops-1.metrics" in files, files
    assert oct((home / "metrics" / "discovery-1.metrics").stat().st_mode & 0o777) == "0o600"


def _gatehouse_account():
    try:
        import pwd
        return pwd.getpwnam("gatehouse")
    except KeyError:
        return None


@pytest.mark.skipif(os.geteuid() != 0 or _gatehouse_account() is None or shutil.which("setpriv") is None,
                    reason="needs root, the gatehouse user and setpriv")
def test_the_ssoctl_wrapper_audits_the_sudo_user_into_a_log_gatehouse_owns(tmp_path):
    """deploy/sbin/ssoctl from root: ssoctl opens the audit log before it
    becomes gatehouse, so admin_change names $SUDO_USER, not gatehouse; the
    log's directory and file are made gatehouse's (0700, 0600) so the
    responders can append to them; the home stays gatehouse's."""
    account = _gatehouse_account()
    # Directories gatehouse can reach (pytest's own tmp_path is root's 0700).
    base = Path(tempfile.mkdtemp(prefix="gatehouse-wrapper-", dir="/tmp"))
    try:
        base.chmod(0o755)
        home, log_dir = base / "home", base / "log" / "gatehouse"
        home.mkdir()
        (base / "log").mkdir()
        os.chown(home, account.pw_uid, account.pw_gid)
        home.chmod(0o711)
        env_file = base / "gatehouse.env"
        env_file.write_text((DEPLOY / "gatehouse.env").read_text()
                            + f"\nGATEHOUSE_HOME={home}\nGATEHOUSE_AUDIT_LOG={log_dir}/audit.log\n")
        environment = {key: value for key, value in os.environ.items() if not key.startswith("GATEHOUSE_")}
        environment.update(GATEHOUSE_SSOCTL_BIN=str(BIN_DIR / "ssoctl"), GATEHOUSE_ENV_FILE=str(env_file),
                           SUDO_USER="deploy-test-admin")
        wrapper = str(DEPLOY / "sbin" / "ssoctl")
        setup = subprocess.run([wrapper, "setup"], env=environment, capture_output=True, text=True, timeout=60)
        assert setup.returncode == 0, setup.stderr
        added = subprocess.run([wrapper, "user", "add", "wrapper@example.com", "--name", "Wrapper", "--password-stdin"],
                               env=environment, input="a long password 1\n", capture_output=True, text=True, timeout=60)
        assert added.returncode == 0, added.stderr

        assert (log_dir.stat().st_uid, oct(log_dir.stat().st_mode & 0o777)) == (account.pw_uid, "0o700")
        audit = log_dir / "audit.log"
        assert (audit.stat().st_uid, oct(audit.stat().st_mode & 0o777)) == (account.pw_uid, "0o600")
        lines = [json.loads(line) for line in audit.read_text().splitlines()]
        changes = [line for line in lines if line["event"] == "admin_change"]
        assert [line["reason"] for line in changes] == ["setup", "user add"], lines
        assert {line["actor"] for line in changes} == {"deploy-test-admin"}, lines
        for path in home.rglob("*"):
            assert path.stat().st_uid == account.pw_uid, f"{path} is not gatehouse's"
    finally:
        shutil.rmtree(base, ignore_errors=True)


# ---------------------------------------------------------------- backup and restore

@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="sqlite3 is not installed")
def test_backup_keeps_the_newest_and_restores_to_a_working_home(tmp_path):
    bin_dir, _ = installed_layout(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    environment = production_environment(home)
    ssoctl = str(bin_dir / "ssoctl")
    assert subprocess.run([ssoctl, "setup"], env=environment, capture_output=True, timeout=30).returncode == 0
    keys_before = subprocess.run([ssoctl, "keys", "list"], env=environment, capture_output=True, text=True).stdout
    backups = tmp_path / "backups"
    for old in ("20200101T000000Z", "20200102T000000Z", "20200103T000000Z"):
        (backups / old).mkdir(parents=True)
    (backups / ".partial-20200104T000000Z").mkdir()  # left by an interrupted run
    environment.update(GATEHOUSE_BACKUP_DIR=str(backups), GATEHOUSE_BACKUP_KEEP="2")
    result = subprocess.run([str(bin_dir / "gatehouse-backup")], env=environment, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    kept = sorted(path.name for path in backups.iterdir())
    assert len(kept) == 2 and kept[0] == "20200103T000000Z", kept
    backup = backups / kept[1]
    assert subprocess.run(["sha256sum", "--quiet", "-c", "SHA256SUMS"], cwd=backup).returncode == 0
    assert (backup / "keys" / "refresh-seal.key").exists()
    assert oct((backup / "gatehouse.sqlite").stat().st_mode & 0o777) == "0o600"

    # Restore into an empty home: the copy and keys/, no -wal or -shm.
    restored = tmp_path / "restored"
    restored.mkdir()
    shutil.copy2(backup / "gatehouse.sqlite", restored / "gatehouse.sqlite")
    shutil.copytree(backup / "keys", restored / "keys")
    environment["GATEHOUSE_HOME"] = str(restored)
    keys_after = subprocess.run([ssoctl, "keys", "list"], env=environment, capture_output=True, text=True)
    assert keys_after.returncode == 0, keys_after.stderr
    assert keys_after.stdout == keys_before


# ---------------------------------------------------------------- nginx

def rewritten_nginx_config(tmp_path):
    """deploy/nginx in a temporary prefix, inside a Debian-like http block."""
    certificate, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                           "-keyout", str(key), "-out", str(certificate), "-days", "2", "-subj", "/CN=sso.example.com"],
                          capture_output=True, timeout=30)
    assert made.returncode == 0, made.stderr
    for folder in ("snippets", "log", "www", "run", "home", "acme", "temp"):
        (tmp_path / folder).mkdir()
    replacements = [
        (r"/etc/letsencrypt/live/[^/;\s]+/privkey\.pem", str(key)),
        (r"/etc/letsencrypt/live/[^/;\s]+/(fullchain|chain)\.pem", str(certificate)),
        (r"/etc/nginx/snippets/", f"{tmp_path}/snippets/"),
        (r"/var/log/nginx/", f"{tmp_path}/log/"),
        (r"/run/gatehouse/", f"{tmp_path}/run/"),
        (r"/usr/share/gatehouse/www", f"{tmp_path}/www"),
        (r"/var/lib/gatehouse/", f"{tmp_path}/home/"),
        (r"/var/www/letsencrypt", f"{tmp_path}/acme"),
        (r"/run/nginx-gatehouse-wellknown", f"{tmp_path}/temp/wellknown"),
    ]
    for source in NGINX_DIR.glob("**/*.conf"):
        text = source.read_text()
        for pattern, replacement in replacements:
            text = re.sub(pattern, replacement, text)
        code = re.sub(r"#.*", "", text)
        leftovers = re.findall(r"(?<![\w.])/(?:etc|run|var|usr)/\S+", code)
        assert set(leftovers) <= {"/etc/nginx/fastcgi_params;"}, f"{source.name}: paths not rewritten: {leftovers}"
        target = tmp_path / ("snippets" if source.parent.name == "snippets" else ".") / source.name
        target.write_text(text)
    # The pages as `ssoctl pages` renders them into /var/lib/gatehouse/pages
    # (the config includes its languages.conf and serves its folders).
    rendered = subprocess.run([str(BIN_DIR / "ssoctl"), "pages", "--source", str(ROOT / "www")], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "GATEHOUSE_HOME": str(tmp_path / "home"),
                                               "GATEHOUSE_AUDIT_LOG": str(tmp_path / "log" / "audit.log")})
    assert rendered.returncode == 0, rendered.stderr
    assert (tmp_path / "home" / "pages" / "languages.conf").is_file()
    temp = tmp_path / "temp"
    main = tmp_path / "nginx.conf"
    main.write_text(f"""
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/log/error.log;
events {{}}
http {{
    # What Debian's /etc/nginx/nginx.conf sets at http level.
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers on;
    access_log {tmp_path}/log/access.log;
    gzip on;
    client_body_temp_path {temp}/body;
    fastcgi_temp_path {temp}/fastcgi;
    proxy_temp_path {temp}/proxy;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    # sites-enabled/, in the order nginx reads it.
    include {tmp_path}/gatehouse-http.conf;
    include {tmp_path}/gatehouse.conf;
}}
""")
    return main


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed")
def test_nginx_accepts_the_production_config(tmp_path):
    main = rewritten_nginx_config(tmp_path)
    result = subprocess.run(["nginx", "-t", "-p", str(tmp_path), "-c", str(main), "-e", str(tmp_path / "log" / "error.log")],
                            capture_output=True, text=True, timeout=30)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 0, result.stderr
    # The self-signed certificate has no OCSP URL: ssl_stapling only warns.
    unexpected = [line for line in lines if ("[warn]" in line or "[emerg]" in line or "[alert]" in line)
                  and "ssl_stapling" not in line]
    assert unexpected == [], "\n".join(unexpected)
