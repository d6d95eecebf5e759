"""Shared by the admin API's end-to-end files (test_admin_api.py,
test_admin_api_pagination.py; docs/ADMIN-API.md): admin clients registered
with ssoctl, their access tokens, calls under ISSUER/admin/v1, problem
documents, list walks, ssoctl's view of the same things and the audit
lines a change writes."""
import json
import os
import secrets
import time
from urllib.parse import parse_qs, urljoin, urlsplit

ADMIN = "gatehouse:admin"
ADMIN_READ = "gatehouse:admin:read"
PROBLEM = "application/problem+json"
URN = "urn:gatehouse:admin:"
ABSENT = object()


def ok(result):
    assert result.returncode == 0, (result.args, result.stdout, result.stderr)
    return result


def unique(prefix):
    return f"{prefix}-{secrets.token_hex(4)}"


def fresh_email(prefix="adm"):
    return f"{prefix}-{secrets.token_hex(5)}@example.com"


def fresh_password():
    return "pw-" + secrets.token_urlsafe(15)


def register_admin_client(stack, client_id, *scopes, extra=()):
    """A confidential machine client (client_credentials, a secret) granted
    `scopes` (default gatehouse:admin), registered with ssoctl: its secret."""
    secret = "admin-secret-" + secrets.token_urlsafe(18)
    arguments = ["client", "add", client_id, "--grant", "client_credentials"]
    for scope in scopes or (ADMIN,):
        arguments += ["--scope", scope]
    ok(stack.ssoctl(*arguments, *extra, "--secret-stdin", input=secret + "\n"))
    return secret


def client_credentials(stack, http, client_id, secret, **form):
    return http.post(stack.issuer + "/token", data={"grant_type": "client_credentials", **form}, auth=(client_id, secret))


def token_for(stack, client_id, secret, **form):
    """An access token from /token for the client (client_credentials)."""
    response = client_credentials(stack, stack.session(), client_id, secret, **form)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["token_type"] == "Bearer", body
    return body["access_token"]


class Admin:
    """Calls to ISSUER/admin/v1 carrying one access token (or none)."""

    def __init__(self, stack, token=None, scheme="Bearer"):
        self.stack, self.token, self.scheme = stack, token, scheme
        self.http = stack.session()
        self.base = stack.issuer + "/admin/v1"

    def url(self, path):
        return self.base + path

    def call(self, method, path, body=ABSENT, *, params=None, headers=None, raw=None, content_type="application/json"):
        """`body` is sent as JSON with `content_type`; `raw` (bytes or
        text) is sent as it is, with `content_type`."""
        sent = {}
        if self.token is not None:
            sent["Authorization"] = f"{self.scheme} {self.token}"
        data = None
        if body is not ABSENT:
            data = json.dumps(body).encode()
        if raw is not None:
            data = raw.encode() if isinstance(raw, str) else raw
        if data is not None and content_type is not None:
            sent["Content-Type"] = content_type
        sent.update(headers or {})
        return self.http.request(method, self.url(path), params=params, data=data, headers=sent, allow_redirects=False)

    def get(self, path, **options):
        return self.call("GET", path, **options)

    def post(self, path, body=ABSENT, **options):
        return self.call("POST", path, body, **options)

    def patch(self, path, body=ABSENT, **options):
        return self.call("PATCH", path, body, **options)

    def delete(self, path, **options):
        return self.call("DELETE", path, **options)

    # --- what a successful call answers ---------------------------------------------------

    def created(self, collection, body):
        """POST `body` to the collection: 201 with Location naming the new
        resource; the JSON answer."""
        response = self.post(collection, body)
        assert response.status_code == 201, (collection, response.status_code, response.text)
        assert response.headers["Content-Type"].split(";")[0].strip() == "application/json", response.headers
        assert "Location" in response.headers, response.headers
        return response

    def one(self, path):
        """GET one resource: 200 with a strong ETag; (JSON, ETag)."""
        response = self.get(path)
        assert response.status_code == 200, (path, response.status_code, response.text)
        etag = response.headers.get("ETag")
        assert etag and etag.startswith('"') and etag.endswith('"') and not etag.startswith("W/"), etag
        return response.json(), etag

    def page(self, path, **params):
        response = self.get(path, params=params)
        assert response.status_code == 200, (path, params, response.status_code, response.text)
        body = response.json()
        assert set(body) == {"items", "next"}, body
        return body


def location_of(stack, response):
    """The Location of a 201, made absolute against the issuer."""
    return urljoin(stack.issuer + "/admin/v1/", response.headers["Location"])


def assert_problem(response, status, kind="about:blank", member=None, names=()):
    """A problem document (RFC 9457): the content type, status, type, title,
    detail; `member` named by the member member and in the detail; every
    text of `names` in the detail."""
    assert response.status_code == status, (status, response.status_code, response.headers, response.text)
    assert response.headers.get("Content-Type", "").split(";")[0].strip() == PROBLEM, (response.headers, response.text)
    body = response.json()
    expected = kind if kind == "about:blank" else URN + kind
    assert body["type"] == expected, body
    assert body["status"] == status, body
    assert isinstance(body.get("title"), str) and body["title"], body
    assert isinstance(body.get("detail"), str) and body["detail"], body
    if member is not None:
        assert body.get("member") == member, body
        assert member in body["detail"], body
    for text in ([names] if isinstance(names, str) else names):
        assert text in body["detail"], (text, body)
    return body


def challenge(response):
    return response.headers.get("WWW-Authenticate", "")


def refused_unchanged(stack, send, status, kind="about:blank", **expected):
    """`send()` is refused with the problem document, and the whole database is as it was."""
    before = stack.database_dump()
    response = send()
    body = assert_problem(response, status, kind, **expected)
    assert stack.database_dump() == before, "a refused request changed the database"
    return response, body


# --- lists ------------------------------------------------------------------------------

def next_link(stack, response):
    """The rel="next" target of the Link header, absolute, or None."""
    link = response.links.get("next")
    return urljoin(response.url, link["url"]) if link else None


def assert_link_matches(stack, response, path, limit):
    """A page with more after it names the next page twice: `next` in the
    body and a Link rel="next" to the same path with that cursor."""
    body = response.json()
    link = next_link(stack, response)
    if body["next"] is None:
        assert link is None, response.headers.get("Link")
        return None
    assert isinstance(body["next"], str) and body["next"], body["next"]
    assert link is not None, response.headers
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == stack.issuer and parts.path == "/admin/v1" + path, link
    assert parse_qs(parts.query) == {"limit": [str(limit)], "next": [body["next"]]}, link
    return link


def walk(admin, path, limit, between=None, follow_link_every=2):
    """Every item of the list at `path`, page by page (`limit` a page),
    following `next` (and, every `follow_link_every` pages, the Link
    header's URL instead); `between(items_of_the_page)` runs after each
    page that has a successor. Returns (items, number of pages)."""
    items, pages = [], 0
    response = admin.get(path, params={"limit": limit})
    while True:
        assert response.status_code == 200, response.text
        body = response.json()
        assert set(body) == {"items", "next"}, body
        pages += 1
        assert len(body["items"]) <= limit, len(body["items"])
        items += body["items"]
        link = assert_link_matches(admin.stack, response, path, limit)
        if body["next"] is None:
            return items, pages
        assert len(body["items"]) == limit, "only the last page is short"
        if between:
            between(body["items"])
        if pages % follow_link_every == 0:
            response = admin.http.get(link, headers={"Authorization": f"{admin.scheme} {admin.token}"})
        else:
            response = admin.get(path, params={"limit": limit, "next": body["next"]})
        assert pages < 1000, "the walk never ends"


# --- ssoctl's view ---------------------------------------------------------------------

def ssoctl_json(stack, *args):
    return json.loads(ok(stack.ssoctl(*args, "--json")).stdout)


def ssoctl_users(stack):
    return {user["email"]: user for user in ssoctl_json(stack, "user", "list")}


def ssoctl_clients(stack):
    return {client["client_id"]: client for client in ssoctl_json(stack, "client", "list")}


def ssoctl_apis(stack):
    return {api["audience"]: api for api in ssoctl_json(stack, "api", "list")}


def ssoctl_keys(stack):
    return {key["kid"]: key for key in ssoctl_json(stack, "keys", "list")}


def ssoctl_sessions(stack, email):
    return {session["sid"]: session for session in ssoctl_json(stack, "sessions", "list", email)}


# --- audit ------------------------------------------------------------------------------

def audit_path(stack):
    return os.path.join(stack.home, "log", "audit.log")


def audit_lines(stack):
    with open(audit_path(stack), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def admin_changes(stack, actor):
    return [line for line in audit_lines(stack) if line.get("event") == "admin_change" and line.get("actor") == actor]


def audited(stack, actor, reason, targets, timeout=5):
    """The one admin_change line of `actor` with `reason` and a target among
    `targets`, waited for (a responder writes it as it answers)."""
    targets = [targets] if isinstance(targets, str) else list(targets)
    deadline = time.time() + timeout
    while True:
        found = [line for line in admin_changes(stack, actor) if line.get("reason") == reason and line.get("target") in targets]
        if found or time.time() > deadline:
            break
        time.sleep(0.05)
    assert len(found) == 1, (reason, targets, found, [(line.get("reason"), line.get("target")) for line in admin_changes(stack, actor)])
    line = found[0]
    assert line["ip"] in ("127.0.0.1", "::1") or str(line["ip"]).startswith("127."), line
    return line


def log_texts(stack):
    """Every log file of the stack (responders, nginx, audit) and Scripts/run's output, as text."""
    folder = os.path.join(stack.home, "log")
    texts = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as handle:
                texts[name] = handle.read()
    texts["run-output.txt"] = stack.log()
    return texts


def probe(value):
    """What of a secret may never appear: a JWT's signature part (enough to
    be a leak), or the whole value."""
    return value.rsplit(".", 1)[-1] if value.count(".") == 2 else value
