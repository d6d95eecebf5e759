"""Scripts/bench --admin: the admin API's user list, `GET
/admin/v1/users?limit=50`, with 100 users and then with 100,000 (issue 33:
within 2x), and the last page of the large list, reached by its cursor
(keyset pages cost the same anywhere in the list). The users are written
in SQL, as --scale fills its database."""
import base64
import os
import sqlite3
import time

from bench_journeys import fill_accounts

ADMIN_CLIENT, ADMIN_SECRET = "bench-admin", "bench-admin-secret-long-enough"
SMALL, LARGE = 100, 100_000


def admin_token(stack, http):
    made = stack.ssoctl("client", "add", ADMIN_CLIENT, "--grant", "client_credentials", "--scope", "gatehouse:admin",
                        "--secret-stdin", input=ADMIN_SECRET + "\n")
    if made.returncode != 0 and "already exists" not in made.stderr:
        raise RuntimeError(made.stderr)
    answer = http.post(stack.issuer + "/token", data={"grant_type": "client_credentials", "scope": "gatehouse:admin"},
                       auth=(ADMIN_CLIENT, ADMIN_SECRET))
    answer.raise_for_status()
    return answer.json()["access_token"]


def user_count(stack):
    database = sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite"), timeout=30)
    try:
        return database.execute("SELECT count(*), max(id) FROM users").fetchone()
    finally:
        database.close()


def cursor_after(user_id):
    """The cursor the API gives after the user with this id (AdminCursor)."""
    return base64.urlsafe_b64encode(f"c1.{user_id}".encode()).decode().rstrip("=")


def admin_rows(stack, http, seconds, connections, threads, wrk):
    """(name, result, ratio, target) rows."""
    bearer = "Authorization: Bearer " + admin_token(stack, http)
    url = stack.issuer + "/admin/v1/users?limit=50"
    count, _ = user_count(stack)
    fill_accounts(stack, SMALL - count)
    small = wrk(url, seconds, connections, threads, headers=[bearer])
    started = time.monotonic()
    fill_accounts(stack, LARGE - SMALL, prefix="scale")
    filled = time.monotonic() - started
    count, last = user_count(stack)
    large = wrk(url, seconds, connections, threads, headers=[bearer])
    deep = wrk(f"{url}&next={cursor_after(last - 50)}", seconds, connections, threads, headers=[bearer])
    rows = [(f"GET /admin/v1/users?limit=50, {SMALL} users (reference)", small, None, None),
            (f"GET /admin/v1/users?limit=50, {count} users (filled in {filled:.0f} s)", large, large["rps"] / small["rps"],
             "≥ 0.5 of the 100-user figure"),
            (f"GET /admin/v1/users?limit=50&next=…, the last page of {count} users", deep, deep["rps"] / small["rps"],
             "≥ 0.5 of the 100-user figure")]
    for name, result, _, _ in rows:
        if result["failed"]:
            raise RuntimeError(f"{name}: {result['failed']} answers failed or were not 2xx")
    return rows
