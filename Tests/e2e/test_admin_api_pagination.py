"""The admin API's lists are keyset pages (docs/ADMIN-API.md,
"Conventions"): walking GET /admin/v1/users and /admin/v1/clients seven at
a time, following `next` (and the Link header's URL, which must name the
same cursor), visits each item that existed throughout exactly once and
none twice, while users and clients are added, and some removed, between
the pages (interleaved, so the changes land between two pages for sure)
and from another thread at the same time. The item a page ended at is
removed before the next page is asked for: the cursor must not need it.

The stack is shared with the worker's other files; every name here is this
module's own."""
import secrets
import threading

import pytest

from admin_api import ADMIN, Admin, assert_link_matches, fresh_password, register_admin_client, ssoctl_clients, ssoctl_users, \
    token_for, walk

PREFIX = f"pg{secrets.token_hex(3)}"
LIMIT = 7


@pytest.fixture(scope="module")
def writer(stack):
    client_id = f"{PREFIX}-writer"
    return client_id, register_admin_client(stack, client_id, ADMIN)


@pytest.fixture()
def admin(stack, writer):
    return Admin(stack, token_for(stack, *writer))


def add_user(admin, label):
    email_address = f"{PREFIX}-{label}-{secrets.token_hex(4)}@example.com"
    created = admin.post("/users", {"email": email_address, "name": "Paged", "password": fresh_password()})
    assert created.status_code == 201, created.text
    return created.json()


def add_client(admin, client_id):
    created = admin.post("/clients", {"client_id": client_id, "redirect_uris": ["com.paged.app:/cb"]})
    assert created.status_code == 201, created.text
    return created.json()


class Adder(threading.Thread):
    """Adds up to `most` items through its own token until stopped: changes
    that race the walk (a bounded number, so the walk reaches the end)."""

    def __init__(self, stack, writer, make, most=12):
        super().__init__(daemon=True)
        self.admin = Admin(stack, token_for(stack, *writer))
        self.make, self.most, self.stopped, self.added, self.errors = make, most, threading.Event(), [], []

    def run(self):
        try:
            while not self.stopped.is_set() and len(self.added) < self.most:
                self.added.append(self.make(self.admin))
        except Exception as error:  # reported by the test
            self.errors.append(error)

    def stop(self):
        self.stopped.set()
        self.join(60)
        assert not self.errors, self.errors
        assert self.added, "the thread added nothing while the walk ran"


def test_walking_the_users_visits_each_user_that_existed_throughout_exactly_once(stack, admin, writer):
    mine = [add_user(admin, "start") for _ in range(3 * LIMIT + 2)]
    at_start = {user["sub"] for user in ssoctl_users(stack).values()}
    assert {user["id"] for user in mine} <= at_start
    doomed = {user["id"] for user in mine[-LIMIT:]}  # removed during the walk, not yet visited (the last made come last)
    removed, added_between, anchors = set(), [], []

    def between(page):
        # The item the page ended at (the cursor's own) goes, when it is ours.
        last = page[-1]["id"]
        if last in {user["id"] for user in mine} and last not in removed:
            assert admin.delete(f"/users/{last}").status_code == 204
            removed.add(last)
            anchors.append(last)
        if doomed - removed:
            victim = sorted(doomed - removed)[0]
            assert admin.delete(f"/users/{victim}").status_code == 204
            removed.add(victim)
        added_between.append(add_user(admin, "between"))

    racer = Adder(stack, writer, lambda other: add_user(other, "racing"))
    racer.start()
    try:
        visited, pages = walk(admin, "/users", LIMIT, between)
    finally:
        racer.stop()
    ids = [user["id"] for user in visited]
    assert pages >= 4, pages
    assert anchors, "a page ended at one of ours, which went before the next page"
    assert len(ids) == len(set(ids)), "no user twice"
    throughout = at_start - removed
    assert throughout <= set(ids), sorted(throughout - set(ids))
    assert set(ids) <= at_start | {user["id"] for user in added_between + racer.added}, "only users that existed"
    assert {user["id"] for user in added_between} <= set(ids), "users made before the last page come after every cursor"
    assert not removed & {user["sub"] for user in ssoctl_users(stack).values()}
    # In the order they were made: ours came in that order.
    order = [ids.index(user["id"]) for user in mine if user["id"] in ids]
    assert order == sorted(order)


def test_the_first_page_and_the_link_header_agree_and_the_default_limit_is_50(stack, admin):
    while len(ssoctl_users(stack)) <= 50:
        add_user(admin, "fill")
    first = admin.get("/users")
    assert first.status_code == 200 and len(first.json()["items"]) == 50 and first.json()["next"]
    followed_default = admin.http.get(first.links["next"]["url"], headers={"Authorization": "Bearer " + admin.token})
    assert followed_default.json() == admin.get("/users", params={"next": first.json()["next"]}).json()
    page = admin.get("/users", params={"limit": LIMIT})
    assert_link_matches(stack, page, "/users", LIMIT)
    followed = admin.http.get(page.links["next"]["url"], headers={"Authorization": "Bearer " + admin.token})
    by_cursor = admin.get("/users", params={"limit": LIMIT, "next": page.json()["next"]})
    assert followed.status_code == 200 and followed.json() == by_cursor.json()
    assert [user["id"] for user in page.json()["items"] + followed.json()["items"]] == \
        [user["id"] for user in admin.get("/users", params={"limit": 2 * LIMIT}).json()["items"]], "consecutive pages"
    last = admin.get("/users", params={"limit": 200})
    while last.json()["next"]:
        last = admin.get("/users", params={"limit": 200, "next": last.json()["next"]})
    assert "Link" not in last.headers and last.json()["next"] is None, "the last page names no next"


def test_walking_the_clients_visits_each_client_that_existed_throughout_exactly_once(stack, admin, writer):
    tag = secrets.token_hex(2)
    # Spread over the whole order, so pages end at ours and changes land before and after every cursor.
    mine = [add_client(admin, f"{first}{PREFIX}-{tag}-{index:02d}")["client_id"] for first in "0amz" for index in range(LIMIT)]
    at_start = set(ssoctl_clients(stack))
    assert set(mine) <= at_start
    removed, before_cursor, after_cursor, anchors = set(), [], [], []

    def between(page):
        last = page[-1]["client_id"]
        if last in mine and last not in removed:
            assert admin.delete(f"/clients/{last}").status_code == 204
            removed.add(last)
            anchors.append(last)
        unvisited = sorted(client_id for client_id in mine if client_id > last and client_id not in removed)
        if unvisited:
            assert admin.delete(f"/clients/{unvisited[-1]}").status_code == 204
            removed.add(unvisited[-1])
        # One that sorts before the cursor (never visited now: "-" sorts
        # before the digits of ours) and one after it (visited later).
        before_cursor.append((add_client(admin, f"0{PREFIX}-{tag}--b{len(before_cursor):02d}")["client_id"], last))
        after_cursor.append(add_client(admin, f"zz{PREFIX}-{tag}-a{len(after_cursor):02d}")["client_id"])

    racer = Adder(stack, writer, lambda other: add_client(other, f"{PREFIX}-race-{secrets.token_hex(4)}")["client_id"])
    racer.start()
    try:
        visited, pages = walk(admin, "/clients", LIMIT, between)
    finally:
        racer.stop()
    ids = [client["client_id"] for client in visited]
    assert pages >= 4, pages
    assert anchors, "a page ended at one of ours, which went before the next page"
    assert ids == sorted(ids), "by client_id"
    assert len(ids) == len(set(ids)), "no client twice"
    throughout = at_start - removed
    assert throughout <= set(ids), sorted(throughout - set(ids))
    assert set(ids) <= at_start | {client_id for client_id, _ in before_cursor} | set(after_cursor) | set(racer.added)
    assert set(after_cursor) <= set(ids), "added after the cursor: visited"
    late = [client_id for client_id, cursor in before_cursor if client_id < cursor]
    assert late and not set(late) & set(ids), "added before the cursor: never visited"
    assert not removed & set(ssoctl_clients(stack))
