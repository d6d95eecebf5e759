"""Thousands of generated malformed requests against every endpoint, through
nginx with TLS: no 5xx, no slow answer, nothing reflected into headers or
HTML, and the database exactly as it was.

The corpus is reproducible: GATEHOUSE_HOSTILE_SEED (default 20261121) fixes
every request (only the forged tokens' stranger key and the real tokens they
are derived from differ between runs). A failure message names the request."""
import itertools
import os
import random
import sqlite3
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from hostile import INJECTED_HEADER, MARKERS, HostileCorpus, Sender, forged_tokens, oversized_head
from oidc_flow import App

SEED = int(os.environ.get("GATEHOUSE_HOSTILE_SEED", "20261121"))
COUNT = 5200
WORKERS = 16
SLOW = 2.0
# Loopback addresses of this file's own (127.2-63.x.y; test_account_security
# uses 127.64-250.x.y): nginx's per-address rate limits and the issuer's login
# throttle count these, never another test's.
_prefix = f"127.{random.randint(2, 63)}.{random.randint(1, 250)}"

# Tables and what the supervisor's sweeper may delete from them while the
# corpus runs (Sweeper.rules); a row that disappears must match its rule.
# `successor_sealed` is left out: the sweeper clears it after the grace window.
SWEEPABLE = {
    "pending_authorizations": lambda r, now: r["expires_at"] <= now,
    "authorization_codes": lambda r, now: (r["used_at"] is None and r["expires_at"] <= now) or r["expires_at"] <= now - 30 * 86400,
    "refresh_tokens": lambda r, now: r["expires_at"] <= now,
    "revoked_access_tokens": lambda r, now: r["expires_at"] <= now,
    "device_secrets": lambda r, now: r["revoked_at"] is not None or r["expires_at"] <= now,
    "sso_sessions": lambda r, now: (r["ended_at"] or r["expires_at"]) <= now - 86400 + 120,
    "pushed_authorizations": lambda r, now: r["used_at"] is not None or r["expires_at"] <= now,
}
TABLES = ["users", "clients", "client_redirect_uris", "signing_keys", "sso_sessions", "refresh_tokens",
          "device_secrets", "revoked_access_tokens", "totp_credentials", "pending_authorizations",
          "authorization_codes", "login_throttle", "schema_migrations", "pushed_authorizations"]


def snapshot(stack):
    """Every row of every table (either backend), as comparable tuples."""
    return {table: {tuple((k, v) for k, v in row.items() if k != "successor_sealed") for row in stack.rows(table)}
            for table in TABLES}


def integrity(stack):
    """SQLite's own check; PostgreSQL checks pages itself (checksums on in
    the test cluster) and must still answer."""
    if stack.database_url:
        return [("ok",)] if stack.query("SELECT 1") == [(1,)] else [("no answer",)]
    with sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite")) as database:
        return database.execute("PRAGMA integrity_check").fetchall()


def describe(outcome):
    hostile = outcome.request
    return (f"{hostile.method!r} {hostile.origin} {hostile.target[:300]!r} headers={[(n, v[:120]) for n, v in hostile.headers]}"
            f" body={hostile.body[:200]!r} -> {outcome.status} in {outcome.seconds:.2f}s {outcome.body[:200]!r}")


def test_generated_hostile_requests_change_nothing_and_never_fail_the_server(stack):
    # Real tokens to mangle and to call the read-only endpoints with; made
    # before the snapshot, so the sign-in itself is not a change.
    http = stack.session()
    app = App(stack, http)
    tokens = app.exchange(app.sign_in()).json()
    jwks = http.get(stack.issuer + "/.well-known/jwks.json").json()
    forged = forged_tokens(jwks, stack.issuer, [stack.api_a, stack.api_b, "mobile-app-001"],
                           [tokens["access_token"], tokens["id_token"]], random.Random(SEED))
    corpus = HostileCorpus(SEED, forged, tokens["access_token"])
    requests = corpus.generate(COUNT)
    assert len(requests) >= 5000
    ports = {"issuer": stack.base, "api-a": stack.base + 1, "api-b": stack.base + 2, "app-links": stack.base + 3}

    before = snapshot(stack)
    addresses = itertools.count(1)
    local = threading.local()
    senders = []

    def send(hostile):
        if not hasattr(local, "sender"):
            local.sender = Sender(ports, stack.ca, f"{_prefix}.{next(addresses)}")
            senders.append(local.sender)
        return local.sender.send(hostile)

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        outcomes = list(pool.map(send, requests))
    elapsed = time.monotonic() - started
    for sender in senders:
        sender.close()

    statuses = Counter(outcome.status for outcome in outcomes)
    slowest = max(outcomes, key=lambda outcome: outcome.seconds)
    print(f"\nhostile: {len(outcomes)} requests ({sum(o.request.raw for o in outcomes)} raw) in {elapsed:.1f}s, "
          f"slowest {slowest.seconds:.3f}s, 429s {statuses.get(429, 0)}, statuses {sorted(statuses.items())}")

    # Without a status line: the HTTP/0.9 lines (nginx answers them without a
    # head), and heads over nginx's line limit that nginx refused and closed
    # on before they were sent completely. Anything else is a failure.
    http09 = [o for o in outcomes if o.status == -2 and o.request.note == "http09"]
    closed_early = [o for o in outcomes if o.status == -1 and oversized_head(o.request)]
    print(f"hostile: {len(http09)} HTTP/0.9 lines, {len(closed_early)} oversized heads closed on before fully sent")
    unanswered = [describe(o) for o in outcomes if o.status < 0 and id(o) not in {id(x) for x in http09 + closed_early}]
    assert unanswered == [], unanswered[:5]
    server_errors = [describe(o) for o in outcomes if o.status >= 500]
    assert server_errors == [], server_errors[:5]
    slow = [describe(o) for o in outcomes if o.seconds > SLOW]
    assert slow == [], slow[:5]
    injected = [describe(o) for o in outcomes
                if INJECTED_HEADER.lower() in o.header_block.lower() or "sso_session=gh" in o.header_block
                or "\x00" in o.header_block]
    assert injected == [], injected[:5]
    reflected = [describe(o) for o in outcomes if "text/html" in o.content_type.lower()
                 and any(marker.encode() in o.body for marker in MARKERS)]
    assert reflected == [], reflected[:5]

    assert integrity(stack) == [("ok",)]
    after = snapshot(stack)
    now = int(time.time())
    for table in TABLES:
        added = after[table] - before[table]
        assert added == set(), f"{table}: rows added or changed by hostile requests: {list(added)[:3]}"
        removed = [dict(row) for row in before[table] - after[table]]
        unexplained = [row for row in removed if not (table in SWEEPABLE and SWEEPABLE[table](row, now))]
        assert unexplained == [], f"{table}: rows removed by hostile requests: {unexplained[:3]}"
