"""Malformed requests get a 4xx, never a 5xx, and change nothing."""
import socket
import ssl

import pytest

ENDPOINTS = ["/.well-known/openid-configuration", "/.well-known/jwks.json"]


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_wrong_methods_get_405_with_allow(stack, http, path, method):
    response = http.request(method, stack.issuer + path, data="a=1")
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, HEAD"


@pytest.mark.parametrize("path", ENDPOINTS)
def test_oversized_bodies_get_413(stack, http, path):
    response = http.post(stack.issuer + path, data=b"a=" + b"x" * 100_000,
                         headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert response.status_code == 413


@pytest.mark.parametrize("path", ENDPOINTS)
@pytest.mark.parametrize("query", ["%", "%zz", "%C3", "a=%00%0D%0A", "a=1&a=2", "x=" + "A" * 6000, "%FF%FE=\u00e9"])
def test_broken_query_encodings_never_fail_the_server(stack, http, path, query):
    response = http.get(stack.issuer + path + "?" + query)
    assert response.status_code < 500
    assert "\r" not in "".join(response.headers.values())


def test_oversized_headers_and_cookies_get_4xx(stack, http):
    response = http.get(stack.issuer + ENDPOINTS[1], headers={"Cookie": "a=" + "x" * 40_000})
    assert 400 <= response.status_code < 500
    response = http.get(stack.issuer + ENDPOINTS[1], headers={"X-Junk": "y" * 40_000})
    assert 400 <= response.status_code < 500


def test_garbage_on_the_wire_gets_400(stack):
    context = ssl.create_default_context(cafile=stack.ca)
    with socket.create_connection(("127.0.0.1", stack.base), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            tls.sendall(b"GET /.well-known/jwks.json\x00\r\n HTTP/1.1\r\nHost: localhost\r\n\r\n")
            reply = tls.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400")


def test_unknown_paths_are_404_on_every_host(stack, http):
    for origin in (stack.issuer, stack.api_a, stack.api_b, stack.app_links):
        response = http.get(origin + "/no/such/thing")
        assert response.status_code == 404, origin


def test_database_unchanged_by_hostile_requests(stack, http):
    before = stack.database_dump()
    for path in ENDPOINTS:
        http.post(stack.issuer + path, data="'; DROP TABLE users; --")
        http.get(stack.issuer + path + "?kid=%27%20OR%201%3D1")
    assert stack.database_dump() == before
