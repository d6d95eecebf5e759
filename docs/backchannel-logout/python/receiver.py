#!/usr/bin/env python3
"""A back-channel logout receiver for an app's backend (OpenID Connect
Back-Channel Logout 1.0 §2.5-§2.8). Needs PyJWT >= 2.10.1 and cryptography.

Gatehouse POSTs `logout_token` when a session the app was issued tokens in
ends. Each verified token prints one JSON line {"sub": ..., "sid": ...}:
end that user's or that session's sessions in your app there. A refused one
prints {"refused": ...} and answers 400.

    receiver.py --issuer https://localhost:8443 --client-id mobile-app-001 \
        --ca-file var/tls/ca.pem --cert server.pem --key server.key --port 9443
"""
import argparse
import json
import ssl
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import jwt

EVENT = "http://schemas.openid.net/event/backchannel-logout"


class LogoutTokens:
    """§2.6: the checks a receiver makes, with the issuer's published keys."""

    def __init__(self, issuer, client_id, ca_file=None):
        self.issuer, self.client_id = issuer, client_id
        tls = ssl.create_default_context(cafile=ca_file)  # trusts only ca_file when given
        with urllib.request.urlopen(issuer + "/.well-known/openid-configuration", context=tls, timeout=10) as reply:
            jwks_uri = json.load(reply)["jwks_uri"]
        self.keys = jwt.PyJWKClient(jwks_uri, ssl_context=tls, timeout=10)  # refetched on an unknown kid
        self.seen, self.lock = {}, threading.Lock()

    def verify(self, token):
        if jwt.get_unverified_header(token).get("typ") != "logout+jwt":
            raise jwt.InvalidTokenError("not a logout token (typ)")
        key = self.keys.get_signing_key_from_jwt(token).key
        claims = jwt.decode(token, key, algorithms=["RS256"], issuer=self.issuer, audience=self.client_id, leeway=60,
                            options={"require": ["iss", "aud", "iat", "exp", "jti", "events"]})
        if not isinstance(claims["events"], dict) or not isinstance(claims["events"].get(EVENT), dict):
            raise jwt.InvalidTokenError("no back-channel logout event")
        if "nonce" in claims:
            raise jwt.InvalidTokenError("a logout token never carries a nonce")
        if "sub" not in claims and "sid" not in claims:
            raise jwt.InvalidTokenError("neither sub nor sid")
        with self.lock:  # a jti seen before is a replay
            now = time.time()
            self.seen = {jti: until for jti, until in self.seen.items() if until > now}
            if claims["jti"] in self.seen:
                raise jwt.InvalidTokenError("replayed jti")
            self.seen[claims["jti"]] = claims["exp"] + 60
        return claims


def handler(tokens):
    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            form = parse_qs(self.rfile.read(min(length, 65536)).decode("ascii", "replace"))
            try:
                if len(form.get("logout_token", [])) != 1:
                    raise jwt.InvalidTokenError("exactly one logout_token")
                claims = tokens.verify(form["logout_token"][0])
                print(json.dumps({"sub": claims.get("sub"), "sid": claims.get("sid")}), flush=True)
                self.answer(200, b"")  # §2.8: 200 when the logout succeeded
            except jwt.PyJWTError as error:
                print(json.dumps({"refused": str(error)}), flush=True)
                self.answer(400, b'{"error":"invalid_request"}')  # §2.8: 400 otherwise

        def answer(self, status, body):
            self.send_response(status)
            self.send_header("Cache-Control", "no-store")  # §2.8
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    return Receiver


def main():
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--issuer", "--client-id", "--cert", "--key"):
        arguments.add_argument(name, required=True)
    arguments.add_argument("--ca-file")
    arguments.add_argument("--port", type=int, default=9443)
    options = arguments.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", options.port), handler(LogoutTokens(options.issuer, options.client_id, options.ca_file)))
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(options.cert, options.key)
    server.socket = tls.wrap_socket(server.socket, server_side=True)
    print(json.dumps({"listening": options.port}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
