"""The references of Scripts/bench that contain no Gatehouse code: a bare
nginx (`return 200`) and a hello-world libfcgi responder written in C, two
processes behind that nginx, with the stack's TLS certificate and settings
and no access log. Whatever Gatehouse's own nginx and responders add
(access logging, headers, parameter handling, the verify path) shows up as
the distance to these."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "hello-fcgi.c")
PROCESSES = 2


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PhysicalReferences:
    """A context manager: `with PhysicalReferences(stack) as ref:` gives
    `ref.hello` (the C responder) and `ref.static` (nginx `return 200`)."""

    def __init__(self, stack):
        self.stack = stack
        self.folder = tempfile.mkdtemp(prefix="gatehouse-reference-")
        self.port = free_port()
        self.hello = f"https://127.0.0.1:{self.port}/hello"
        self.static = f"https://127.0.0.1:{self.port}/static"
        self.children = []

    def __enter__(self):
        binary = os.path.join(self.folder, "hello-fcgi")
        subprocess.run(["cc", "-O2", "-o", binary, SOURCE, "-lfcgi"], check=True, capture_output=True, timeout=120)
        sockets = []
        for index in range(PROCESSES):
            path = os.path.join(self.folder, f"hello-{index}.sock")
            self.children.append(subprocess.Popen(["spawn-fcgi", "-n", "-s", path, "-M", "0666", "--", binary],
                                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            sockets.append(path)
        tls = os.path.join(self.stack.home, "tls")
        # What Gatehouse's nginx sets for TLS and connections, nothing else.
        config = f"""
worker_processes auto;
pid {self.folder}/nginx.pid;
error_log {self.folder}/error.log warn;
{"user root;" if os.geteuid() == 0 else ""}
events {{ worker_connections 2048; }}
http {{
    access_log off;
    sendfile on;
    keepalive_timeout 30s;
    client_body_temp_path {self.folder}/body;
    fastcgi_temp_path {self.folder}/fastcgi;
    proxy_temp_path {self.folder}/proxy;
    uwsgi_temp_path {self.folder}/uwsgi;
    scgi_temp_path {self.folder}/scgi;
    ssl_certificate {tls}/server.pem;
    ssl_certificate_key {tls}/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_prefer_server_ciphers off;
    ssl_session_cache shared:reference:10m;
    ssl_session_timeout 1h;
    upstream hello {{
{"".join(f"        server unix:{path} max_fails=0;{chr(10)}" for path in sockets)}    }}
    fastcgi_keep_conn off;
    server {{
        listen 127.0.0.1:{self.port} ssl;
        location = /hello {{
            include /etc/nginx/fastcgi_params;
            fastcgi_pass hello;
        }}
        location = /static {{
            default_type application/json;
            return 200 '{{"hello":"world"}}';
        }}
    }}
}}
"""
        path = os.path.join(self.folder, "nginx.conf")
        with open(path, "w") as handle:
            handle.write(config)
        self.children.append(subprocess.Popen(["nginx", "-g", "daemon off;", "-p", self.folder, "-c", path, "-e",
                                               os.path.join(self.folder, "error.log")],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.time() + 15
        http = self.stack.session()
        while time.time() < deadline:
            try:
                if http.get(self.hello, timeout=2).status_code == 200 and http.get(self.static, timeout=2).status_code == 200:
                    return self
            except Exception:  # noqa: BLE001 (not up yet)
                pass
            time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError("the reference nginx did not answer; see " + os.path.join(self.folder, "error.log"))

    def __exit__(self, *exc):
        for child in reversed(self.children):
            if child.poll() is None:
                child.send_signal(signal.SIGTERM if child.args[0] == "nginx" else signal.SIGKILL)
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.kill()
        shutil.rmtree(self.folder, ignore_errors=True)
        return False
