"""Generated hostile HTTP requests and a client that sends them exactly as written.

`HostileCorpus(seed, ...)` builds a reproducible list of `Hostile` requests
(method, host, raw target, headers, body) aimed at every endpoint of a stack;
`send()` delivers one over TLS, through http.client when it can carry the
request unchanged, through a raw TLS socket when it cannot (CR/LF or NUL in a
header value or the target, methods http.client refuses), and returns the raw
status, header block and body."""
import base64
import hashlib
import hmac
import json
import random
import socket
import ssl
import time
from dataclasses import dataclass, field
from http.client import HTTPSConnection
from urllib.parse import quote

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

# Strings that must never come back raw in an HTML body.
MARKERS = ["<script>gh</script>", "\"><img src=x onerror=gh(1)>", "'><svg/onload=gh(2)>"]
# A header an injected CR/LF would create in a response.
INJECTED_HEADER = "X-Gh-Injected"

SQL = ["' OR '1'='1", "'; DROP TABLE users; --", "\" OR 1=1 --", "1) UNION SELECT sqlite_version()--",
       "%' AND 1=1 AND '%'='", "x'); DELETE FROM refresh_tokens; --", "\\'; --", "*/ SELECT 1 /*"]
BAD_PERCENT = ["%", "%%", "%z", "%zz", "%G1", "%0", "a%", "%%41", "%C3", "%E2%82", "%F0%9F%98", "%u0041", "%2", "%%%"]
BAD_UTF8 = ["%FF%FE", "%C0%AF", "%C0%80", "%ED%A0%80", "%F8%88%80%80%80", "%FE%FF%00", "%80", "%BF%BF", "%C3%28",
            "%E2%28%A1", "%F4%90%80%80"]
CONTROL = ["%00", "a%00b", "%0D%0A", "%0A", "%0D", "x%0D%0A" + INJECTED_HEADER + ":%201",
           "%0D%0ASet-Cookie:%20sso_session=gh", "%0D%0A%0D%0A<html>gh", "%1B[31m", "%7F", "%08%09%0B%0C"]
UNICODE = ["\u00e9", "\u202egh", "\ufeff", "\U0001F600", "\u0000", "e\u0301", "\u2028\u2029", "\uff1cscript\uff1e"]

ISSUER_PARAMETERS = {
    "/authorize": ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge",
                   "code_challenge_method", "prompt", "max_age", "login_hint", "id_token_hint", "request",
                   "response_mode", "ui_locales", "claims"],
    "/login": ["req", "email", "password", "otp"],
    "/token": ["grant_type", "code", "redirect_uri", "client_id", "code_verifier", "refresh_token", "scope",
               "subject_token", "subject_token_type", "actor_token", "actor_token_type", "audience",
               "requested_token_type", "client_secret", "device_secret"],
    "/userinfo": ["access_token", "schema", "claims"],
    "/logout": ["id_token_hint", "post_logout_redirect_uri", "state", "client_id", "logout_hint", "ui_locales"],
    "/revoke": ["token", "token_type_hint", "client_id", "client_secret"],
    "/introspect": ["token", "token_type_hint", "client_id", "client_secret"],
    "/par": ["client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method",
             "request_uri", "request", "prompt", "client_secret"],
    "/.well-known/openid-configuration": ["kid", "x"],
    "/.well-known/jwks.json": ["kid", "x"],
    "/login.html": ["req", "error", "email"],
    "/login-otp.html": ["req", "error"],
    "/mobile/postlogin.html": ["code", "state", "iss", "error", "error_description"],
    "/mobile/postlogout.html": ["state"],
}
API_PARAMETERS = {"api-a": ("/api/data", ["q", "user", "limit"]), "api-b": ("/api/records", ["q", "limit", "id"])}
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE", "PROPFIND", "FOO", "get", "POSTX"]
RAW_METHODS = ["GET\x00", "G ET", "GET\r\nX: y", "\x16\x03\x01", "GET\t", "P" * 2000]
CONTENT_TYPES = [None, "application/x-www-form-urlencoded", "application/json", "text/plain", "text/html",
                 "multipart/form-data; boundary=gh", "multipart/form-data", "application/x-www-form-urlencoded; charset=utf-7",
                 "application/x-www-form-urlencoded; charset=\"\r\n\"", "application/jwt", "*/*", "application/xml",
                 "application/x-www-form-urlencoded" + "; a=b" * 200]


HEAD_LINE_LIMIT = 16 * 1024  # nginx: large_client_header_buffers 4 16k


def oversized_head(hostile):
    """Whether the request line or a header line is over nginx's limit: nginx
    answers 414/400 and may close before the whole head is sent."""
    return len(hostile.target) + len(hostile.method) + 10 > HEAD_LINE_LIMIT or \
        any(len(name) + len(value) + 4 > HEAD_LINE_LIMIT for name, value in hostile.headers)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(header, claims, signature=b""):
    return b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode()) + "." + b64url(signature)


def forged_tokens(jwks, issuer, audiences, real_tokens, rng):
    """JWTs no verifier may accept: alg none, HS256 keyed with the public key
    (PEM and DER forms), RS256 by a stranger's key under a real kid, real
    tokens with changed claims or cut signatures, and structural junk."""
    key = jwks["keys"][0]
    kid = key["kid"]
    n = int.from_bytes(base64.urlsafe_b64decode(key["n"] + "=" * (-len(key["n"]) % 4)), "big")
    e = int.from_bytes(base64.urlsafe_b64decode(key["e"] + "=" * (-len(key["e"]) % 4)), "big")
    public = rsa.RSAPublicNumbers(e, n).public_key()
    hmac_keys = [public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo),
                 public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.PKCS1),
                 public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo),
                 json.dumps(key).encode()]
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    tokens = []
    for audience in audiences:
        claims = {"iss": issuer, "sub": "gh-attacker", "aud": audience, "client_id": "mobile-app-001",
                  "scope": "openid profile email api:serverA api:serverB", "iat": now, "nbf": now, "exp": now + 3600,
                  "jti": "gh-" + str(rng.random()), "email": "alice@example.com"}
        for typ in ("at+jwt", "JWT", None):
            head = {"kid": kid, **({"typ": typ} if typ else {})}
            for alg in ("none", "None", "NONE", "nOnE"):
                tokens.append(jwt({**head, "alg": alg}, claims))
                tokens.append(jwt({**head, "alg": alg}, claims)[:-1])  # no trailing dot
            for material in hmac_keys:
                for alg, digest in (("HS256", hashlib.sha256), ("HS384", hashlib.sha384), ("HS512", hashlib.sha512)):
                    body = b64url(json.dumps({**head, "alg": alg}).encode()) + "." + b64url(json.dumps(claims).encode())
                    tokens.append(body + "." + b64url(hmac.new(material, body.encode(), digest).digest()))
            for alg in ("RS256", "PS256", "RS512"):
                body = b64url(json.dumps({**head, "alg": alg}).encode()) + "." + b64url(json.dumps(claims).encode())
                tokens.append(body + "." + b64url(stranger.sign(body.encode(), padding.PKCS1v15(), hashes.SHA256())))
            body = b64url(json.dumps({**head, "alg": "RS256", "jwk": {"kty": "RSA", "n": b64url(
                stranger.public_key().public_numbers().n.to_bytes(256, "big")), "e": "AQAB"}}).encode()) + "." + \
                b64url(json.dumps(claims).encode())
            tokens.append(body + "." + b64url(stranger.sign(body.encode(), padding.PKCS1v15(), hashes.SHA256())))
            tokens.append(jwt({**head, "alg": "RS256", "kid": "../../keys/" + kid}, claims, b"x" * 256))
            tokens.append(jwt({**head, "alg": "RS256", "kid": "' OR 1=1 --"}, claims, b"x" * 256))
            tokens.append(jwt({**head, "alg": "RS256", "kid": MARKERS[0]}, claims, b"x" * 256))
            tokens.append(jwt({**head, "alg": "RS256", "kid": "gh-" + str(rng.random()) * 50}, claims, b"x" * 256))
            tokens.append(jwt({**head, "alg": "RS256", "crit": ["exp"]}, claims, b"x" * 256))
            tokens.append(jwt({**head, "alg": "RS256", "jku": "https://127.0.0.1:1/jwks"}, claims, b"x" * 256))
    for real in real_tokens:
        header, payload, signature = real.split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        for change in ({"sub": "gh-attacker"}, {"exp": now + 10 ** 6}, {"scope": claims.get("scope", "") + " admin"},
                       {"aud": [claims.get("aud"), "https://evil.example"]}, {"iss": issuer + "/"}):
            tokens.append(header + "." + b64url(json.dumps({**claims, **change}).encode()) + "." + signature)
        tokens += [header + "." + payload + "." + signature[:-8],  # a shorter signature: never the same bytes
                   header + "." + payload + "." + b64url(bytes(256)),
                   header + "." + payload + "." + b64url(rng.randbytes(256)),
                   header + "." + payload + ".", header + "." + payload, real + ".", real + "." + signature,
                   b64url(json.dumps({"alg": "none", "kid": kid, "typ": "at+jwt"}).encode()) + "." + payload + ".",
                   b64url(json.dumps({"alg": "HS256", "kid": kid, "typ": "at+jwt"}).encode()) + "." + payload + "." +
                   b64url(hmac.new(hmac_keys[0], (header + "." + payload).encode(), hashlib.sha256).digest()),
                   real.replace(".", ".."), " " + real, real[:len(real) // 2], real.upper()]
    tokens += ["", ".", "..", "...", "a.b.c", "e30.e30.", "e30.e30.e30", "!!!.@@@.###", "eyJ" * 3000,
               b64url(b'{"alg":"RS256"') + ".e30.x", b64url(b"[]") + "." + b64url(b"[]") + ".x",
               b64url(b'{"alg":"RS256","kid":' + b"[" * 5000 + b"]" * 5000 + b"}") + ".e30.x",
               b64url(json.dumps({"alg": "RS256", "kid": kid, "typ": "at+jwt"}).encode()) + "." + b64url(b"\xff\xfe") + ".x",
               b64url(json.dumps({"alg": "RS256", "kid": kid, "typ": "at+jwt"}).encode()) + "." +
               b64url(json.dumps({"exp": 1e308, "iat": -1e308, "nbf": "x", "aud": {"a": 1}}).encode()) + ".x"]
    return tokens


@dataclass
class Hostile:
    method: str
    origin: str           # "issuer", "api-a", "api-b", "app-links"
    target: str           # sent exactly as written
    headers: list = field(default_factory=list)
    body: bytes = b""
    raw: bool = False     # needs the raw socket
    note: str = ""


class HostileCorpus:
    def __init__(self, seed, forged, real_access_token, pending_req=None):
        self.rng = random.Random(seed)
        self.forged = forged
        self.real_access_token = real_access_token
        self.pending_req = pending_req or "gh-no-such-request"

    # --- values -----------------------------------------------------------------
    def value(self, encoded=True):
        """One hostile parameter value, percent-encoded as it goes on the wire
        (with the deliberately broken encodings left broken)."""
        rng = self.rng
        kind = rng.randrange(12)
        if kind == 0:
            return rng.choice(BAD_PERCENT) + rng.choice(["", "x", "=", "&"])
        if kind == 1:
            return "a" + rng.choice(BAD_UTF8) + "b"
        if kind == 2:
            return rng.choice(CONTROL)
        if kind == 3:
            return quote(rng.choice(MARKERS), safe="") if rng.random() < 0.7 else rng.choice(MARKERS).replace(" ", "%20")
        if kind == 4:
            return quote(rng.choice(SQL), safe="")
        if kind == 5:
            return quote(rng.choice(UNICODE), safe="")
        if kind == 6:
            return "A" * rng.choice([100_000, 20_000, 5_000, 1_000])
        if kind == 7:
            return quote(rng.choice(self.forged), safe="")
        if kind == 8:
            return quote("".join(chr(rng.randrange(0x20, 0x7f)) for _ in range(rng.randrange(1, 60))), safe="")
        if kind == 9:
            return "".join(rng.choice("%&=+;?#/\\") for _ in range(rng.randrange(1, 20)))
        if kind == 10:
            return rng.choice(["", "-1", "0", "99999999999999999999999", "1e309", "NaN", "null", "true", "[]", "{}"])
        return "".join("%%%02X" % rng.randrange(256) for _ in range(rng.randrange(1, 30)))

    def query(self, names, poison=None):
        """A query/form string over `names`: some hostile values, repeats,
        names without values, and hostile names."""
        rng = self.rng
        pairs = []
        for name in rng.sample(names, rng.randrange(1, len(names) + 1)):
            count = rng.choice([1, 1, 1, 2, 3])
            for _ in range(count):
                pairs.append(name + "=" + self.value())
        if rng.random() < 0.2:
            pairs.append(self.value() + "=" + self.value())
        if rng.random() < 0.1:
            pairs.append(rng.choice(names))  # no '='
        if rng.random() < 0.1:
            pairs.append("=" + self.value())
        rng.shuffle(pairs)
        if poison:
            pairs.append(poison)
        return "&".join(pairs)

    def cookie(self):
        rng = self.rng
        choice = rng.randrange(7)
        if choice == 0:
            return "sso_session=" + rng.choice(self.forged)[:500]
        if choice == 1:
            return "gh_login=" + self.value()[:300] + "; sso_session=" + self.value()[:300]
        if choice == 2:
            return "a=" + "x" * rng.choice([40_000, 9_000])
        if choice == 3:
            return "; ".join(f"c{i}=v" for i in range(rng.choice([50, 500])))
        if choice == 4:
            return "sso_session=a; sso_session=b; gh_login=" + MARKERS[0]
        if choice == 5:
            return "=;;;==; =x; sso_session"
        return "gh_login=\"" + "\\" * 50 + "\""

    def authorization(self):
        rng = self.rng
        token = rng.choice(self.forged)
        return rng.choice(["Bearer " + token, "Bearer " + token, "bearer " + token, "Bearer  " + token, "Bearer",
                           "Bearer ", "Basic " + b64url(b"mobile-app-001:" + rng.randbytes(8)), "Basic !!!",
                           "Basic " + b64url(MARKERS[0].encode() + b":x"), "Bearer " + token + " " + token,
                           "DPoP " + token, "Bearer " + "A" * rng.choice([9_000, 20_000]),
                           "Bearer " + self.real_access_token + "x", "Bearer\t" + token])

    # --- requests ---------------------------------------------------------------
    def authorize_poison(self):
        """Something that makes an /authorize request invalid on its own, so
        no pending authorization is ever stored (the table stays unchanged)."""
        rng = self.rng
        return rng.choice([
            "client_id=gh-no-such-client",
            "client_id=mobile-app-001&redirect_uri=myapp%3Aevil",
            "client_id=mobile-app-001&redirect_uri=myapp%3Aauth%2Fcallback&code_challenge_method=plain&response_type=code",
            "client_id=mobile-app-001&redirect_uri=myapp%3Aauth%2Fcallback&response_type=token&code_challenge_method=S256",
            "client_id=mobile-app-001&redirect_uri=https%3A%2F%2Fevil.example%2Fcb",
            "client_id=mobile-app-001&redirect_uri=myapp%3Aauth%2Fcallback&code_challenge=short&code_challenge_method=S256&response_type=code",
        ])

    def one(self):
        rng = self.rng
        headers = []
        origin = "issuer"
        pick = rng.random()
        if pick < 0.12:
            origin = rng.choice(["api-a", "api-b"])
            path, names = API_PARAMETERS[origin]
        elif pick < 0.14:
            origin = "app-links"
            path, names = rng.choice(["/.well-known/apple-app-site-association", "/.well-known/assetlinks.json"]), ["x"]
        else:
            path = rng.choice(list(ISSUER_PARAMETERS))
            names = ISSUER_PARAMETERS[path]
        poison = None
        if path == "/authorize":
            poison = self.authorize_poison()
            names = [n for n in names if n not in ("client_id", "redirect_uri", "response_type", "code_challenge",
                                                   "code_challenge_method")] + ["scope"]
        natural = "POST" if path in ("/login", "/token", "/revoke", "/introspect", "/par") else "GET"
        if path in ("/authorize", "/userinfo"):
            natural = rng.choice(["GET", "POST"])
        method = natural if rng.random() < 0.75 else rng.choice(METHODS)
        params = self.query(names, poison)
        target = path
        body = b""
        if method in ("GET", "HEAD", "get", "DELETE", "OPTIONS", "TRACE") or rng.random() < 0.2:
            target = path + "?" + params
        else:
            body = params.encode("utf-8", "surrogateescape")
            ctype = "application/x-www-form-urlencoded" if rng.random() < 0.6 else rng.choice(CONTENT_TYPES)
            if ctype:
                headers.append(("Content-Type", ctype))
            if ctype == "application/json" and rng.random() < 0.5:
                body = json.dumps({n: rng.choice(MARKERS + SQL) for n in names}).encode()
            if ctype and ctype.startswith("multipart") and rng.random() < 0.5:
                body = (b"--gh\r\nContent-Disposition: form-data; name=\"grant_type\"\r\n\r\n" +
                        rng.choice(MARKERS).encode() + b"\r\n--gh--\r\n")
            if rng.random() < 0.05:
                body = rng.randbytes(rng.randrange(1, 2000))
            if poison and rng.random() < 0.5:  # the poison in the query, the rest in the body
                target = path + "?" + poison
        if rng.random() < 0.3:
            headers.append(("Cookie", self.cookie()))
        if path in ("/userinfo", "/introspect", "/revoke", "/token", "/par") or origin.startswith("api"):
            if rng.random() < 0.7:
                headers.append(("Authorization", self.authorization()))
        if rng.random() < 0.1:
            headers.append(rng.choice([("X-Forwarded-For", "127.0.0.1, " + MARKERS[0]), ("Host", "evil.example"),
                                       ("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site"),
                                       ("Referer", MARKERS[1]), ("X-Big", "y" * 20_000), ("Accept", MARKERS[0]),
                                       ("Content-Encoding", "gzip"),
                                       ("Range", "bytes=0-0,-1"), ("Expect", "100-continue"),
                                       ("User-Agent", MARKERS[0] + "\u00e9")]))
        return Hostile(method, origin, target, headers, body, note="generated")

    def raw_one(self):
        """Requests http.client refuses to send: CR/LF/NUL in header values and
        targets, broken request lines and methods."""
        rng = self.rng
        path = rng.choice(list(ISSUER_PARAMETERS) + ["/api/data"])
        origin = "api-a" if path == "/api/data" else "issuer"
        if path == "/authorize":
            path += "?" + self.authorize_poison() + "&"
        kind = rng.randrange(6)
        headers = [("Cookie", "sso_session=x")]
        method, target = "GET", path
        if kind == 0:
            headers.append(("X-Test", "a\r\n" + INJECTED_HEADER + ": 1"))
        elif kind == 1:
            headers.append(("Authorization", "Bearer x\r\n" + INJECTED_HEADER + ": 1"))
        elif kind == 2:
            headers.append(("Cookie", "gh_login=a\x00b; sso_session=\x00"))
        elif kind == 3:
            method = rng.choice(RAW_METHODS)
        elif kind == 4:
            # A bare CR stays inside the request line (nginx: 400); an LF ends it
            # early, leaving an HTTP/0.9 line that nginx answers without a head.
            breaker = rng.choice(["\r", "\r", "\n", "\r\n"])
            target = path + ("&" if "?" in path else "?") + "state=a" + breaker + INJECTED_HEADER + ": 1"
            note = "http09" if "\n" in breaker else "raw4"
            return Hostile(method, origin, target, headers, b"", raw=True, note=note)
        else:
            target = path + rng.choice([" x", "\x00", "\t", "#frag<script>gh</script>", "\\..\\..", "/../../etc/passwd"])
        return Hostile(method, origin, target, headers, b"", raw=True, note=f"raw{kind}")

    def generate(self, count, raw_share=0.08):
        return [self.raw_one() if self.rng.random() < raw_share else self.one() for _ in range(count)]


# --- sending ----------------------------------------------------------------------

@dataclass
class Outcome:
    request: Hostile
    status: int
    seconds: float
    header_block: str     # the raw response header lines (latin-1), status line excluded
    content_type: str
    body: bytes
    error: str = ""


class Sender:
    """One per thread: a keep-alive http.client connection per origin, bound
    to one source address so rate limits and throttles stay this test's own."""

    def __init__(self, ports, ca, source):
        self.ports, self.source = ports, source
        self.context = ssl.create_default_context(cafile=ca)
        self.connections = {}

    def close(self):
        for connection in self.connections.values():
            connection.close()

    def send(self, hostile):
        start = time.monotonic()
        if hostile.raw or not self._http_client_can_send(hostile):
            status, block, body = self._raw(hostile)
        else:
            status, block, body = self._http_client(hostile)
        seconds = time.monotonic() - start
        content_type = ""
        for line in block.split("\r\n"):
            if line.lower().startswith("content-type:"):
                content_type = line.split(":", 1)[1].strip()
        return Outcome(hostile, status, seconds, block, content_type, body)

    @staticmethod
    def _http_client_can_send(hostile):
        if any(c in hostile.target for c in " \t\r\n\x00\x7f"):
            return False
        if not hostile.method.isascii() or not hostile.method.isalpha():
            return False
        return not any(any(c in f"{n}{v}" for c in "\r\n\x00") for n, v in hostile.headers)

    def _http_client(self, hostile, retry=True):
        connection = self.connections.get(hostile.origin)
        if connection is None:
            connection = HTTPSConnection("localhost", self.ports[hostile.origin], context=self.context, timeout=10,
                                         source_address=(self.source, 0))
            self.connections[hostile.origin] = connection
        try:
            connection.putrequest(hostile.method, hostile.target, skip_host=any(n == "Host" for n, _ in hostile.headers),
                                  skip_accept_encoding=True)
            for name, value in hostile.headers:
                connection.putheader(name, value.encode("utf-8", "surrogateescape"))
            if hostile.body or hostile.method not in ("GET", "HEAD"):
                connection.putheader("Content-Length", str(len(hostile.body)))
            connection.endheaders(hostile.body or None)
            response = connection.getresponse()
            body = response.read()
            block = "\r\n".join(f"{n}: {v}" for n, v in response.msg.items())
            if response.will_close:
                connection.close()
                self.connections.pop(hostile.origin, None)
            return response.status, block, body
        except (ConnectionError, OSError) as error:
            connection.close()
            self.connections.pop(hostile.origin, None)
            # A keep-alive connection nginx closed between two requests: once more, fresh.
            if retry:
                return self._http_client(hostile, retry=False)
            return -1, "", repr(error).encode()

    def _raw(self, hostile):
        head = f"{hostile.method} {hostile.target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        head += "".join(f"{n}: {v}\r\n" for n, v in hostile.headers)
        if hostile.body:
            head += f"Content-Length: {len(hostile.body)}\r\n"
        data = head.encode("utf-8", "surrogateescape") + b"\r\n" + hostile.body
        chunks = []
        try:
            with socket.create_connection(("127.0.0.1", self.ports[hostile.origin]), timeout=10,
                                          source_address=(self.source, 0)) as raw:
                with self.context.wrap_socket(raw, server_hostname="localhost") as tls:
                    tls.sendall(data)
                    while True:
                        chunk = tls.recv(65536)
                        if not chunk:
                            break
                        chunks.append(chunk)
        except (ConnectionError, OSError, ssl.SSLError) as error:
            if not chunks:
                return -1, "", repr(error).encode()
        reply = b"".join(chunks)
        head_bytes, _, body = reply.partition(b"\r\n\r\n")
        lines = head_bytes.decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            return -2, head_bytes.decode("latin-1"), body
        return status, "\r\n".join(lines[1:]), body
