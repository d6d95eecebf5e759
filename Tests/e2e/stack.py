"""Starts and stops a real Gatehouse stack (Scripts/run) for the end-to-end tests.

Each stack gets a temporary GATEHOUSE_HOME and five free consecutive ports,
so tests never touch var/ or a stack the developer is running."""
import os
import random
import shutil
import signal
import socket
import sqlite3
import ssl
import subprocess
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer

import requests

import database
import listening_ports

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEMO_PASSWORD = "demo-password-e2e"


def free_base_port():
    """A base port whose base..base+4 (issuer, api-a, api-b, app links, ops
    listener) are all free on 127.0.0.1 and ::1, below the ephemeral range
    (listening_ports)."""
    for _ in range(200):
        base = random.randint(listening_ports.LOWEST, listening_ports.highest() - 4)
        if all(_port_free(base + i) for i in range(5)):
            return base
    raise RuntimeError("no five consecutive free ports")


def _port_free(port):
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, port))
            except OSError as error:
                if family == socket.AF_INET6 and error.errno == 99:  # no IPv6 here
                    continue
                return False
    return True


class Stack:
    def __init__(self, home=None, extra_env=None, root=ROOT, command_prefix=()):
        self.root = str(root)  # the checkout whose Scripts/run starts it
        self.command_prefix = list(command_prefix)  # e.g. unshare, to run it in namespaces of its own
        self.owns_home = home is None
        self.home = home or tempfile.mkdtemp(prefix="gatehouse-e2e-")
        self.base = free_base_port()
        self.issuer = f"https://localhost:{self.base}"
        self.api_a = f"https://localhost:{self.base + 1}"
        self.api_b = f"https://localhost:{self.base + 2}"
        self.app_links = f"https://localhost:{self.base + 3}"
        # The ops listener: plain HTTP on loopback (/metrics, /health/live, /health/ready).
        self.ops = f"http://127.0.0.1:{self.base + 4}"
        self.env = dict(os.environ, GATEHOUSE_HOME=self.home, GATEHOUSE_BASE_PORT=str(self.base),
                        GATEHOUSE_DEMO_PASSWORD=DEMO_PASSWORD, GATEHOUSE_SKIP_BUILD="1",
                        BIN_DIR=os.environ["BIN_DIR"], **(extra_env or {}))
        # The PostgreSQL pass of Scripts/test: every stack gets a database of
        # its own on the private cluster it names.
        server = os.environ.get("GATEHOUSE_E2E_POSTGRES_SERVER")
        if server and "GATEHOUSE_DATABASE_URL" not in self.env:
            self.env["GATEHOUSE_DATABASE_URL"] = database.create_database(server)
        self.database_url = self.env.get("GATEHOUSE_DATABASE_URL")
        self.process = None
        self.output_path = os.path.join(self.home, "run-output.txt")

    @property
    def ca(self):
        return os.path.join(self.home, "tls", "ca.pem")

    def start(self, timeout=60):
        self.output = open(self.output_path, "ab")
        self.output_start = self.output.tell()  # a restarted home appends to the same file
        # Start Scripts/run as a terminal would: a shell that was itself started
        # in the background ignores SIGINT, and an ignored signal is inherited
        # across exec and cannot be trapped, so give the child the default back.
        self.process = subprocess.Popen([*self.command_prefix, os.path.join(self.root, "Scripts", "run")], env=self.env,
                                        cwd=self.root,
                                        stdout=self.output, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Scripts/run exited {self.process.returncode}:\n{self.log()}")
            if "Gatehouse is running" in self.log()[self.output_start:]:
                return self
            time.sleep(0.1)
        raise RuntimeError(f"stack not ready in {timeout}s:\n{self.log()}")

    def log(self):
        with open(self.output_path, "r", encoding="latin-1") as handle:
            return handle.read()

    def stop(self, sig=signal.SIGTERM, timeout=20):
        """Signals Scripts/run and returns its exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else None
        self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self.output.close()

    def remove(self):
        """Deletes the temporary home this stack made (never one it was given),
        after stopping; keep it with GATEHOUSE_KEEP_E2E_HOMES=1 to read logs."""
        self.stop()
        if self.owns_home and not os.environ.get("GATEHOUSE_KEEP_E2E_HOMES"):
            shutil.rmtree(self.home, ignore_errors=True)

    def another_node(self, extra_env, keys=None):
        """A second node of this stack's issuer on PostgreSQL (`extra_env`
        names the database), started: the master key (or the one in `keys`,
        a backup's) and TLS copied in, the same issuer and origins."""
        home = tempfile.mkdtemp(prefix="gatehouse-e2e-node-")
        os.makedirs(os.path.join(home, "keys"), mode=0o700)
        shutil.copy2(os.path.join(keys or os.path.join(self.home, "keys"), "master.key"), os.path.join(home, "keys", "master.key"))
        shutil.copytree(os.path.join(self.home, "tls"), os.path.join(home, "tls"))
        node = Stack(home=home, extra_env=dict(extra_env, GATEHOUSE_ISSUER=self.issuer, GATEHOUSE_API_A_ORIGIN=self.api_a,
                                               GATEHOUSE_API_B_ORIGIN=self.api_b, GATEHOUSE_APP_LINKS_ORIGIN=self.app_links))
        node.owns_home = True
        return node.start()

    def processes(self):
        """Processes still running that belong to this stack's home."""
        found = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    command = handle.read().replace(b"\0", b" ").decode(errors="replace")
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:
                continue
            if self.home in command or f"GATEHOUSE_HOME={self.home}".encode() in environ.split(b"\0"):
                found.append((int(pid), command))
        return found

    def session(self):
        http = requests.Session()
        http.verify = self.ca
        http.trust_env = False  # the environment sets REQUESTS_CA_BUNDLE
        return http

    def ssoctl(self, *args, input=None):
        return subprocess.run([os.path.join(os.environ["BIN_DIR"], "ssoctl"), *args], env=self.env, input=input,
                              capture_output=True, text=True, timeout=60)

    def pid(self, name):
        with open(os.path.join(self.home, "run", "pids", f"{name}.pid")) as handle:
            return int(handle.read().strip())

    def database_dump(self):
        """Every row of the issuer's database, as text, to compare before and after."""
        if self.database_url:
            return database.dump(self.database_url)
        return subprocess.run(["sqlite3", os.path.join(self.home, "gatehouse.sqlite"), ".dump"],
                              capture_output=True, text=True, check=True).stdout

    def query(self, sql, *parameters):
        """Rows of the issuer's database, on either backend (SQL with `?`)."""
        if self.database_url:
            return database.query(self.database_url, sql, parameters)
        with sqlite3.connect(os.path.join(self.home, "gatehouse.sqlite")) as connection:
            return connection.execute(sql, parameters).fetchall()

    def rows(self, table):
        """Every row of one of the issuer's tables, as dicts, on either backend."""
        if self.database_url:
            return database.rows(self.database_url, table)
        with sqlite3.connect(os.path.join(self.home, "gatehouse.sqlite")) as connection:
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute(f"SELECT * FROM {table}")]

    def execute(self, sql, *parameters):
        """A change to the issuer's database, on either backend (SQL with `?`)."""
        if self.database_url:
            return database.execute(self.database_url, sql, parameters)
        with sqlite3.connect(os.path.join(self.home, "gatehouse.sqlite")) as connection:
            connection.execute(sql, parameters)


def wait_for(predicate, timeout, what):
    """`predicate`'s first true value within `timeout` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def https_server(home, port, handler):
    """A threaded HTTPS server on 127.0.0.1:`port` with the certificate of
    the stack at `home` (from its local CA, which the issuer trusts in the
    development layout), serving in a daemon thread; `shutdown()` stops it.
    The test receivers of logout tokens and clients' keys."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(os.path.join(home, "tls", "server.pem"), os.path.join(home, "tls", "server.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
