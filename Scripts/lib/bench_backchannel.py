"""Scripts/bench's back-channel logout rows (issue 31).

- The refresh grant with three clients registered for back-channel logout,
  against the same run without: a refresh never looks at them, so its cost
  must not change (≥ 0.95).
- RP-initiated logout of a session that three clients were issued tokens in,
  against the same logout with no back-channel URI: the request only queues
  three outbox rows, so it may cost at most what signing three JWTs would
  (the signing bound of three more JWTs, from `openssl speed rsa2048`).
- The mail sender's delivery rate: a user with many such sessions disabled
  at once, every notice signed and POSTed to a local HTTPS receiver, against
  one process's RSA-2048 signing rate (each delivery is one signature plus
  an HTTPS POST on a new connection)."""
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler

from oidc_flow import App
from stack import https_server

CLIENTS = ("mobile-app-001", "mobile-app-002", "bench-backend")
LOGOUTS = 40
DISABLED_SESSIONS = 150


class CountingReceiver:
    """HTTPS on loopback with the stack's certificate: answers 200 and counts."""

    def __init__(self, home, port):
        self.count, self.lock = 0, threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: one request per connection, as the sender makes them
            # (keep-alive here only made each reply wait for the close).
            protocol_version = "HTTP/1.0"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.count += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = https_server(home, port, Handler)

    def wait_for(self, count, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.count >= count:
                    return True
            time.sleep(0.01)
        return False

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def signed_in_sessions(stack, count):
    """`count` sessions of the demo user, each (as far as back-channel logout
    is concerned) issued tokens to all three clients: mobile-app-001 by a code
    exchange, the other two noted as a Native SSO exchange would note them."""
    sessions = []
    for _ in range(count):
        http = stack.session()
        app = App(stack, http)
        tokens = app.exchange(app.sign_in()).json()
        sessions.append((http, tokens["id_token"]))
    stack.execute("UPDATE sso_sessions SET client_ids = ? WHERE ended_at IS NULL", " ".join(CLIENTS))
    return sessions


def logout_milliseconds(stack, count):
    """Mean milliseconds of RP-initiated logouts (id_token_hint of the
    browser's own session: it ends at once)."""
    times = []
    for http, id_token in signed_in_sessions(stack, count):
        started = time.perf_counter()
        answer = http.get(stack.issuer + "/logout", params={"id_token_hint": id_token}, allow_redirects=False)
        times.append((time.perf_counter() - started) * 1000)
        if answer.status_code not in (200, 303):
            raise RuntimeError(f"logout answered {answer.status_code}: {answer.text[:200]}")
    return statistics.mean(times)


def set_uris(stack, uri):
    for client in CLIENTS:
        arguments = ["--backchannel-logout-uri", uri + "?client=" + client] if uri else ["--no-backchannel-logout"]
        result = stack.ssoctl("client", "update", client, *arguments)
        if result.returncode != 0:
            raise RuntimeError(result.stderr)


def best(held, result):
    return result if held is None or result["rps"] > held["rps"] else held


def backchannel_rows(stack, http, seconds, connections, threads, refresh_grant, sign_rate, port):
    added = stack.ssoctl("client", "add", "bench-backend", "--redirect-uri", "https://backend.bench.example/cb")
    if added.returncode != 0:
        raise RuntimeError(added.stderr)
    receiver = CountingReceiver(stack.home, port)
    try:
        # Refresh without and with the URIs, the best of two rounds each, in
        # the order A B B A: every run adds rows, so whichever ran first
        # would have the smaller database; the difference sought is smaller
        # than one run's noise.
        results = {True: None, False: None}
        for told in (False, True, True, False):
            set_uris(stack, f"https://127.0.0.1:{port}/backchannel" if told else None)
            results[told] = best(results[told], refresh_grant(stack, http, seconds, connections, threads))
        plain_refresh, told_refresh = results[False], results[True]
        set_uris(stack, None)
        plain_logout = logout_milliseconds(stack, LOGOUTS)
        set_uris(stack, f"https://127.0.0.1:{port}/backchannel")
        before = receiver.count
        told_logout = logout_milliseconds(stack, LOGOUTS)
        receiver.wait_for(before + 3 * LOGOUTS, 120)
        # The sender's rate: every notice of a disabled user's sessions at once.
        signed_in_sessions(stack, DISABLED_SESSIONS)
        before = receiver.count
        started = time.monotonic()
        if stack.ssoctl("user", "disable", "alice@example.com").returncode != 0:
            raise RuntimeError("ssoctl user disable failed")
        delivered = receiver.wait_for(before + 3 * DISABLED_SESSIONS, 300)
        elapsed = time.monotonic() - started
        stack.ssoctl("user", "enable", "alice@example.com")
        count = receiver.count - before
    finally:
        set_uris(stack, None)
        receiver.stop()
    three_signatures_ms = 3 * 1000 / sign_rate
    extra_ms = told_logout - plain_logout
    deliveries = {"rps": count / elapsed, "unit": "deliveries/s",
                  "checks": f"{count} of {3 * DISABLED_SESSIONS} notices in {elapsed:.1f} s" + ("" if delivered else " (timed out)")}
    return [
        ("POST /token refresh_token, 3 clients with back-channel URIs", told_refresh, told_refresh["rps"] / plain_refresh["rps"],
         "≥ 0.95 of refresh without"),
        (f"GET /logout, 3 back-channel clients: +{extra_ms:.2f} ms over {plain_logout:.2f} ms "
         f"(3 RS256 signatures: {three_signatures_ms:.2f} ms)", {"rps": told_logout, "unit": "ms per logout"},
         extra_ms / three_signatures_ms, "≤ 1.0 of 3 signatures"),
        ("back-channel deliveries (sign + HTTPS POST, one mailer)", deliveries, deliveries["rps"] / sign_rate,
         "against one process's RSA-2048 signing rate"),
    ]
