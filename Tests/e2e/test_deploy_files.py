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
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
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


def test_no_fastcgi_keep_alive_towards_single_threaded_responders():
    for path in NGINX_DIR.glob("**/*.conf"):
        assert not re.search(r"fastcgi_keep_conn\s+on", path.read_text()), path


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


def installed_layout(tmp_path):
    """tmp/bin standing in for /usr/lib/gatehouse/bin, and the units rewritten to it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Scripts are copied first and binaries linked after, never the other way
    # round: a copy onto an existing symlink would write into $BIN_DIR.
    for script in (DEPLOY / "bin").iterdir():
        shutil.copyfile(script, bin_dir / script.name)
        (bin_dir / script.name).chmod(0o755)
    for name in responders() + ["ssoctl"]:
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
    installed = set(responders()) | {"ssoctl"} | {path.name for path in (DEPLOY / "bin").iterdir()}
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
