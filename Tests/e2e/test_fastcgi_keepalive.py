"""FastCGI keep-alive (nginx's fastcgi_keep_conn on the resource servers'
pools) without stalls. libfcgi alone keeps a connection whose request asked
for it and then blocks reading it: a single-threaded responder holding one
idle kept connection would leave every other connection to it unanswered
until nginx closed the idle one (its keep-alive timeout). The accept loop
holds up to 64 connections and waits on all of them and the listening
socket at once. First on a responder's own socket, byte by byte; then
through nginx, under concurrent load, with idle gaps, against the real
api-a and api-b."""
import os
import socket
import sys
import threading
import time

import pytest

from oidc_flow import App
from stack import ROOT

sys.path.insert(0, os.path.join(ROOT, "Scripts", "lib"))
from fcgi_probe import BEGIN_REQUEST, PARAMS, STDIN, _params, _record, read_answer, request_bytes, spawned  # noqa: E402

HELLO = os.path.join(os.environ.get("BIN_DIR", ""), "hello-fcgi")
# FCGI_BEGIN_REQUEST's body is role (2 bytes), flags (1 byte), reserved; the
# record header before it is 8 bytes. FCGI_KEEP_CONN is flag 1 (FastCGI 1.0 §5.1).
FLAGS_OFFSET = 8 + 2


def kept(request):
    return request[:FLAGS_OFFSET] + b"\x01" + request[FLAGS_OFFSET + 1:]


def hello_request(keep=False):
    request = request_bytes("GET", "/bench/hello", "localhost")
    return kept(request) if keep else request


def post_with_body(body, keep=True):
    """A POST whose body the hello-world never reads (as api-a never reads
    the body of a POST it refuses with 405)."""
    params = {"REQUEST_METHOD": "POST", "SCRIPT_NAME": "/bench/hello", "QUERY_STRING": "", "HTTP_HOST": "localhost",
              "REMOTE_ADDR": "127.0.0.1", "CONTENT_LENGTH": str(len(body)), "CONTENT_TYPE": "application/x-www-form-urlencoded"}
    records = [_record(BEGIN_REQUEST, bytes([0, 1, 1 if keep else 0, 0, 0, 0, 0, 0])), _record(PARAMS, _params(params)),
               _record(PARAMS, b"")]
    records += [_record(STDIN, body[start:start + 8000]) for start in range(0, len(body), 8000)]
    return b"".join(records + [_record(STDIN, b"")])


def assert_hello(client, keep=False, timeout=3):
    """One hello-world request on `client`, answered within `timeout`."""
    client.sendall(hello_request(keep=keep))
    assert b'{"hello":"world"}' in read_answer(client, timeout)


def connected(path):
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    return client


def closed_by_peer(client, timeout):
    client.settimeout(timeout)
    try:
        return client.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def on_hello(test):
    """Runs test(socket path) against a hello-fcgi process of its own."""
    return spawned([HELLO], dict(os.environ), lambda path, process: test(path))


def test_a_kept_connection_carries_the_next_request():
    def test(path):
        with connected(path) as client:
            for _ in range(3):
                assert_hello(client, keep=True, timeout=5)
    on_hello(test)


def test_without_keep_conn_the_connection_is_closed_after_the_answer():
    def test(path):
        with connected(path) as client:
            assert_hello(client, timeout=5)
            assert closed_by_peer(client, 5)
    on_hello(test)


def test_a_closed_request_never_waits_for_the_other_side_to_close():
    """libfcgi's lingering close waits up to 2 s for the web server to close
    its end of a connection that carried one request; the accept loop closes
    at once when the request was read to its end, so a connection left open
    by its client does not hold up the next one."""
    def test(path):
        with connected(path) as lingering:
            assert_hello(lingering, timeout=5)
            assert closed_by_peer(lingering, 1), "closed by the responder while still open here"
            with connected(path) as next_one:
                started = time.monotonic()
                assert_hello(next_one, timeout=5)
                assert time.monotonic() - started < 0.5, "the next connection waited for the first to be closed"
    on_hello(test)


@pytest.mark.parametrize("size", [10, 20_000])
def test_a_closed_request_with_an_unread_body_gets_its_whole_answer(size):
    """A body the responder never reads is drained before the close, so the
    close never resets the connection under its answer."""
    def test(path):
        for _ in range(3):
            with connected(path) as client:
                client.sendall(post_with_body(b"x" * size, keep=False))
                assert b'{"hello":"world"}' in read_answer(client, 3)
                assert closed_by_peer(client, 3)
    on_hello(test)


def test_an_idle_kept_connection_never_holds_up_another():
    def test(path):
        with connected(path) as idle:
            idle.sendall(hello_request(keep=True))
            read_answer(idle, 5)
            # The responder now holds `idle` open. A second connection must
            # be answered at once (plain libfcgi would wait for `idle`)...
            with connected(path) as second:
                started = time.monotonic()
                assert_hello(second, timeout=3)
                assert time.monotonic() - started < 2
            # ...and `idle` is still the responder's, with the next request.
            assert_hello(idle, keep=True, timeout=3)
    on_hello(test)


def test_requests_on_many_kept_connections_are_all_answered():
    """Kept connections beyond what one process holds (64): the one served
    longest ago is closed for the newcomer; every request still gets its answer."""
    def test(path):
        clients = []
        try:
            # As nginx does: a connection opens with its request.
            for _ in range(70):
                clients.append(connected(path))
                assert_hello(clients[-1], keep=True, timeout=3)
            assert closed_by_peer(clients[0], 3), "the first kept connection made room"
            for client in clients[-60:]:
                client.sendall(hello_request(keep=True))
            for client in clients[-60:]:
                assert b'{"hello":"world"}' in read_answer(client, 3)
        finally:
            for client in clients:
                client.close()
    on_hello(test)


def test_the_responder_stops_on_sigterm_while_holding_kept_connections():
    def test(path, process):
        with connected(path) as idle:
            idle.sendall(hello_request(keep=True))
            read_answer(idle, 5)
            process.terminate()
            assert process.wait(timeout=5) == 0, "exits through the end of its accept loop"
    spawned([HELLO], dict(os.environ), test)


@pytest.mark.parametrize("size", [10, 20_000])
def test_an_unread_body_does_not_spoil_the_kept_connection(size):
    """The body of a request the responder never reads is skipped to its
    end: the next request on the same connection is read as a request, and
    the process never falls back to waiting in accept()."""
    def test(path):
        with connected(path) as client:
            client.sendall(post_with_body(b"x" * size))
            assert b'{"hello":"world"}' in read_answer(client, 3)
            assert_hello(client, keep=True, timeout=3)
            with connected(path) as other:
                assert_hello(other, timeout=3)
    on_hello(test)


def test_a_kept_connection_that_closes_does_not_stop_the_responder():
    def test(path):
        with connected(path) as first:
            first.sendall(hello_request(keep=True))
            read_answer(first, 5)
        with connected(path) as second:
            assert_hello(second, keep=True, timeout=3)
    on_hello(test)


def test_a_connection_that_sends_half_a_request_is_not_dropped_as_idle():
    """The loop drops only a kept connection with nothing to read: one whose
    next request has begun arriving is served, then the waiting one."""
    def test(path):
        with connected(path) as first:
            first.sendall(hello_request(keep=True))
            read_answer(first, 5)
            request = hello_request(keep=True)
            first.sendall(request[:12])
            with connected(path) as second:
                second.sendall(hello_request())
                time.sleep(0.2)
                first.sendall(request[12:])
                assert b'{"hello":"world"}' in read_answer(first, 3)
                assert b'{"hello":"world"}' in read_answer(second, 3)
    on_hello(test)


@pytest.fixture(scope="module")
def bearer(stack):
    app = App(stack, stack.session())
    return "Bearer " + app.exchange(app.sign_in()).json()["access_token"]


def test_through_nginx_bursts_and_idle_gaps_never_stall_or_fail(stack, bearer):
    """Many clients at once, each on connections of its own, in bursts with
    idle gaps between (when nginx holds kept connections idle in each of its
    workers): every answer is the API's, none waits for a keep-alive timeout."""
    statuses, slowest, lock = [], [0.0], threading.Lock()

    def client():
        with stack.session() as http:
            for burst in range(3):
                for _ in range(15):
                    started = time.monotonic()
                    response = http.get(stack.api_a + "/api/data", headers={"Authorization": bearer}, timeout=20)
                    with lock:
                        statuses.append(response.status_code)
                        slowest[0] = max(slowest[0], time.monotonic() - started)
                time.sleep(0.3 * burst)

    threads = [threading.Thread(target=client) for _ in range(24)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * (24 * 3 * 15)
    assert slowest[0] < 5, f"a request waited {slowest[0]:.1f} s: a kept connection held it up"


def test_other_methods_are_still_the_apis_405_under_load(stack, bearer):
    """A POST is refused by the responder (405), even when it meets a kept
    connection being dropped: the API's locations retry any method, since
    nothing they answer has an effect."""
    results, lock = [], threading.Lock()

    def client():
        with stack.session() as http:
            for index in range(30):
                posted = index % 2 == 1
                response = http.request("POST" if posted else "GET", stack.api_b + "/api/records",
                                        headers={"Authorization": bearer}, timeout=20)
                with lock:
                    results.append((posted, response.status_code))

    threads = [threading.Thread(target=client) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {status for posted, status in results if posted} == {405}
    assert {status for posted, status in results if not posted} == {200}


def test_posts_with_bodies_then_gets_on_the_same_kept_connections(stack, bearer, http):
    """nginx reuses the connection that carried a refused POST's body."""
    for round in range(5):
        refused = http.post(stack.api_a + "/api/data", data={"field": "x" * 5000 * round}, headers={"Authorization": bearer},
                            timeout=10)
        assert refused.status_code == 405
        assert http.get(stack.api_a + "/api/data", headers={"Authorization": bearer}, timeout=5).status_code == 200


def test_a_kept_connections_request_is_logged_once_nothing_waits(stack, bearer, http):
    """The request log holds lines only while another request is ready:
    with nothing waiting, a call on a kept connection is in api-a's log at
    once, before the process waits for the next."""
    response = http.get(stack.api_a + "/api/data", headers={"Authorization": bearer}, timeout=5)
    request_id = response.headers["X-Request-Id"]
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        with open(os.path.join(stack.home, "log", "api-a.log"), encoding="utf-8") as handle:
            if any(f'"request_id":"{request_id}"' in line for line in handle):
                return
        time.sleep(0.05)
    pytest.fail(f"no api-a log line for {request_id} while the process waits")
