"""nginx's rate limits count an IPv6 client by its /64 and an IPv4 client by
its address, in both layouts, as the login throttle does (LoginThrottle).

Real nginx, real sockets: each layout's limit_req_zone key and the snippet
it includes run in an nginx inside a private network namespace (`unshare
-n`), whose loopback gets addresses in two IPv6 /64s; curl sends one request
from each source address against a zone of 1 request a minute, no burst. A
second request from the same bucket is refused (429), one from another
bucket is not. No stack fixture: a few seconds in all."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SNIPPET_NAME = "gatehouse-rate-limit-key.conf"
LAYOUTS = {
    "Scripts/run": ROOT / "nginx" / "gatehouse.conf.template",
    "deploy": ROOT / "deploy" / "nginx" / "gatehouse.conf",
}

# (label, source address, URL, expected status), in the order sent. Port 8080
# listens on 127.0.0.1 and on [::] (IPv6 only); port 8081 is one dual-stack
# socket, where an IPv4 client appears as ::ffff:a.b.c.d.
REQUESTS = [
    ("first address of fd00:1::/64", "fd00:1::1", "http://[fd00:1::1]:8080/", 200),
    ("another address of the same /64", "fd00:1::2", "http://[fd00:1::1]:8080/", 429),
    ("an address of another /64", "fd00:2::1", "http://[fd00:1::1]:8080/", 200),
    ("IPv4 127.0.0.1", "127.0.0.1", "http://127.0.0.1:8080/", 200),
    ("IPv4 127.0.0.2, another address", "127.0.0.2", "http://127.0.0.1:8080/", 200),
    ("127.0.0.2 again, seen as ::ffff:127.0.0.2", "127.0.0.2", "http://127.0.0.1:8081/", 429),
    ("127.0.0.3, seen as ::ffff:127.0.0.3", "127.0.0.3", "http://127.0.0.1:8081/", 200),
]


def shipped_key(layout):
    """The key of the layout's login zone, and the snippet file it includes."""
    text = LAYOUTS[layout].read_text()
    zone = re.search(r"^\s*limit_req_zone\s+(\S+)\s+zone=\w*login\b", text, re.MULTILINE)
    assert zone, f"{LAYOUTS[layout]}: no limit_req_zone for login"
    included = re.findall(rf"^\s*include\s+\S*/{re.escape(SNIPPET_NAME)};", text, re.MULTILINE)
    return zone.group(1), (ROOT / "deploy" / "nginx" / "snippets" / SNIPPET_NAME if included else None)


def probe_config(folder, key, snippet):
    include = f"include {snippet};" if snippet else ""
    temp, www = folder / "temp", folder / "www"
    temp.mkdir()
    www.mkdir()
    (www / "index.html").write_text("ok\n")
    config = folder / "nginx.conf"
    config.write_text(f"""
user root root;
pid {folder}/nginx.pid;
error_log {folder}/error.log info;
events {{}}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    fastcgi_temp_path {temp}/fastcgi;
    proxy_temp_path {temp}/proxy;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    {include}
    limit_req_zone {key} zone=probe:1m rate=1r/m;
    limit_req_status 429;
    server {{
        listen 127.0.0.1:8080;
        listen [::]:8080 ipv6only=on;
        listen [::]:8081 ipv6only=off;
        # A static file, not `return`: return answers in the rewrite
        # phase, before limit_req (preaccess) is consulted at all.
        location / {{
            limit_req zone=probe;
            root {www};
        }}
    }}
}}
""")
    return config


def statuses_in_a_private_network(folder, config):
    """Runs nginx and the requests in a network namespace of their own."""
    lines = [
        "set -e",
        "ip link set lo up",
        *[f"ip addr add {address}/64 dev lo nodad" for address in ("fd00:1::1", "fd00:1::2", "fd00:2::1")],
        f"nginx -p {folder} -c {config} -e {folder}/error.log",
        "trap 'kill $(cat " + str(folder) + "/nginx.pid)' EXIT",
        # Until both listeners take a connection (a bare TCP connect is no
        # request, so no limit counts it): under load, a first curl once
        # found 8081 refusing (exit 7) right after nginx returned.
        "for port in 8080 8081; do for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.05; done; done",
        *[f"curl -s -o /dev/null -w '%{{http_code}}\\n' --max-time 5 --interface {source} '{url}'"
          for _, source, url, _ in REQUESTS],
    ]
    result = subprocess.run(["unshare", "--net", "bash", "-c", "\n".join(lines)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr + (folder / "error.log").read_text()
    return [int(code) for code in result.stdout.split()]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
                    reason="a private network namespace needs root, unshare (util-linux) and ip (iproute2)")
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_rate_limits_count_ipv6_clients_by_their_64_and_ipv4_clients_by_address(tmp_path, layout):
    key, snippet = shipped_key(layout)
    statuses = statuses_in_a_private_network(tmp_path, probe_config(tmp_path, key, snippet))
    got = {label: status for (label, *_), status in zip(REQUESTS, statuses)}
    assert got == {label: expected for label, _, _, expected in REQUESTS}, f"key {key} in {LAYOUTS[layout]}"


def test_every_zone_of_both_layouts_uses_the_shared_key():
    for layout, path in LAYOUTS.items():
        keys = re.findall(r"^\s*limit_req_zone\s+(\S+)", path.read_text(), re.MULTILINE)
        assert keys and "$gatehouse_rate_limit_key" in keys, (layout, keys)
        # The mail-sending forms' zones count posts only, by the same key.
        assert set(keys) <= {"$gatehouse_rate_limit_key", "$gatehouse_form_post_key"}, (layout, keys)
    snippet = (ROOT / "deploy" / "nginx" / "snippets" / SNIPPET_NAME).read_text()
    post_key = re.search(r"map \$request_method \$gatehouse_form_post_key \{([^}]*)\}", snippet)
    assert post_key, "the snippet defines $gatehouse_form_post_key"
    entries = dict(line.split() for line in post_key.group(1).strip().splitlines())
    assert entries == {"POST": "$gatehouse_rate_limit_key;", "default": '"";'}, entries
