"""Faults on stacks of their own: responders killed under load, the issuer's
JWKS responders frozen while the resource servers keep validating, and the
database write-locked by another process for longer than the busy timeout.

Left out: a full disk (needs a size-limited filesystem, i.e. root mount
tricks) and a read-only database (as root, chmod 0400 does not stop writes)."""
import os
import random
import signal
import sqlite3
import threading
import time

import requests

from oidc_flow import App
from stack import Stack

FAST = {"GATEHOUSE_LOGIN_RATE": "1000r/s", "GATEHOUSE_TOKEN_RATE": "1000r/s", "GATEHOUSE_AUTHORIZE_RATE": "1000r/s"}
SEED = int(os.environ.get("GATEHOUSE_FAULT_SEED", "6"))


def signed_in(stack):
    http = stack.session()
    app = App(stack, http)
    body = app.exchange(app.sign_in()).json()
    return http, app, body


def refresh(http, stack, token, timeout=10):
    return http.post(stack.issuer + "/token", timeout=timeout,
                     data={"grant_type": "refresh_token", "client_id": "mobile-app-001", "refresh_token": token})


def integrity(stack):
    with sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite"), timeout=10) as database:
        return database.execute("PRAGMA integrity_check").fetchall()


def slots(stack):
    """Responder slot name -> pid, from the supervisor's pid files (not nginx)."""
    directory = os.path.join(stack.home, "run", "pids")
    found = {}
    for name in os.listdir(directory):
        if name.endswith(".pid") and name != "nginx.pid":
            with open(os.path.join(directory, name)) as handle:
                text = handle.read().strip()
            if text.isdigit():
                found[name[:-4]] = int(text)
    return found


def serving(stack, slot, pid):
    """True when pid is the slot's responder itself (exec'd, so its socket is
    bound), not a restart still waiting out its delay, and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            if handle.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            command = handle.read().split(b"\0")[0].decode()
    except OSError:
        return False
    return os.path.basename(command) == slot.rsplit("-", 1)[0]


def test_responders_killed_every_second_under_load_are_restarted_and_cost_under_one_percent():
    stack = Stack(extra_env=FAST).start()
    try:
        http, _, tokens = signed_in(stack)
        access = tokens["access_token"]
        stop = threading.Event()
        results = {"jwks": [0, 0], "discovery": [0, 0], "api-a": [0, 0], "refresh": [0, 0]}  # [sent, failed]
        failures = []

        def loop(kind):
            session = stack.session()
            token = tokens["refresh_token"] if kind == "refresh" else None
            if kind == "refresh":
                _, _, mine = signed_in(stack)
                token = mine["refresh_token"]
            while not stop.is_set():
                try:
                    if kind == "jwks":
                        response = session.get(stack.issuer + "/.well-known/jwks.json", timeout=10)
                    elif kind == "discovery":
                        response = session.get(stack.issuer + "/.well-known/openid-configuration", timeout=10)
                    elif kind == "api-a":
                        response = session.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + access},
                                               timeout=10)
                    else:
                        response = refresh(session, stack, token)
                        if response.status_code == 200:
                            token = response.json()["refresh_token"]
                        # Not 200: the same token again next time (a lost reply
                        # gets the same successor within the grace window).
                    ok = response.status_code == 200
                    detail = (response.status_code, response.text[:120])
                except requests.RequestException as error:
                    ok, detail = False, repr(error)[:160]
                results[kind][0] += 1
                if not ok:
                    results[kind][1] += 1
                    failures.append((kind, detail))

        threads = [threading.Thread(target=loop, args=(kind,)) for kind in results]
        for thread in threads:
            thread.start()
        rng = random.Random(SEED)
        killed = []
        try:
            time.sleep(1)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                current = slots(stack)
                # A victim whose pool is otherwise serving: with both slots of
                # a pool down nginx has nowhere to send the request at all.
                candidates = sorted(slot for slot, pid in current.items()
                                    if all(serving(stack, other, current[other]) for other in current
                                           if other.rsplit("-", 1)[0] == slot.rsplit("-", 1)[0]))
                if candidates:
                    victim = rng.choice(candidates)
                    os.kill(current[victim], signal.SIGKILL)
                    killed.append((victim, current[victim]))
                time.sleep(1)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=30)

        # Every killed slot is back, as a new serving process.
        deadline = time.time() + 10
        while time.time() < deadline:
            current = slots(stack)
            if all(serving(stack, slot, pid) for slot, pid in current.items()) and \
                    not {pid for _, pid in killed} & set(current.values()):
                break
            time.sleep(0.2)
        current = slots(stack)
        assert all(serving(stack, slot, pid) for slot, pid in current.items()), current
        assert not {pid for _, pid in killed} & set(current.values()), "a killed pid is still listed"
        restarts = stack.log().count(") exited (")
        sent = sum(count for count, _ in results.values())
        failed = sum(count for _, count in results.values())
        print(f"\nkill -9 under load: {len(killed)} kills {sorted(slot for slot, _ in killed)}, {restarts} restarts logged, "
              f"{sent} requests, {failed} failed ({100.0 * failed / max(sent, 1):.3f}%), by kind {results}; "
              f"failures {failures[:5]}")
        assert len(killed) >= 15, killed
        assert restarts >= len(killed)
        assert sent >= 1000, results
        assert failed / sent < 0.01, (results, failures[:10])
        assert all(sent_kind > 0 for sent_kind, _ in results.values()), results
        assert integrity(stack) == [("ok",)]
    finally:
        stack.stop()


def test_resource_servers_keep_validating_with_their_cached_jwks_while_the_issuer_is_frozen():
    stack = Stack(extra_env=FAST).start()
    frozen = []
    try:
        http, _, tokens = signed_in(stack)
        bearer = {"Authorization": "Bearer " + tokens["access_token"]}
        # Every process of both pools fetches the JWKS on its first request;
        # nginx alternates between the two processes of a pool.
        for _ in range(6):
            assert http.get(stack.api_a + "/api/data", headers=bearer, timeout=10).status_code == 200
            assert http.get(stack.api_b + "/api/records", headers=bearer, timeout=10).status_code == 200

        # SIGSTOP: the supervisor sees the processes alive and restarts
        # nothing; nginx connects to their sockets and never gets an answer.
        for slot, pid in slots(stack).items():
            if slot.startswith("jwks-"):
                os.kill(pid, signal.SIGSTOP)
                frozen.append(pid)
        assert len(frozen) == 2, slots(stack)
        try:
            down = http.get(stack.issuer + "/.well-known/jwks.json", timeout=2)
            assert down.status_code >= 500, "the JWKS should be unreachable"
        except requests.RequestException:
            pass

        answers = []
        for _ in range(20):
            for url in (stack.api_a + "/api/data", stack.api_b + "/api/records"):
                started = time.monotonic()
                response = http.get(url, headers=bearer, timeout=10)
                answers.append((url, response.status_code, round(time.monotonic() - started, 3)))
        assert all(status == 200 for _, status, _ in answers), answers
        assert max(seconds for _, _, seconds in answers) < 2, answers
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        stack.stop()


def test_a_write_lock_held_past_the_busy_timeout_gives_503_with_retry_after_never_500():
    stack = Stack(extra_env=FAST).start()
    try:
        http, _, tokens = signed_in(stack)
        token = tokens["refresh_token"]
        answers = []

        def hammer():
            session = stack.session()
            while not released.is_set():
                started = time.monotonic()
                response = refresh(session, stack, token, timeout=15)
                answers.append((response.status_code, response.headers.get("Retry-After"), response.text[:120],
                                round(time.monotonic() - started, 2), released.is_set()))

        released = threading.Event()
        locker = sqlite3.connect(os.path.join(stack.home, "gatehouse.sqlite"), timeout=10, isolation_level=None)
        try:
            locker.execute("BEGIN IMMEDIATE")
            threads = [threading.Thread(target=hammer) for _ in range(2)]
            for thread in threads:
                thread.start()
            time.sleep(4.5)  # the busy timeout is 2 s
        finally:
            locker.execute("ROLLBACK")
            locker.close()
            released.set()
        for thread in threads:
            thread.join(timeout=30)

        print(f"\nwrite lock: {answers}")
        assert answers, "requests were sent while the lock was held"
        assert all(status in (200, 503) for status, *_ in answers), answers
        assert all(retry_after and retry_after.isdigit() for status, retry_after, *_ in answers if status == 503), answers
        # While the lock was surely held (a request that started and ended before the release), 503.
        assert any(status == 503 for status, *_ in answers), answers
        # Released: the same token works (unused, or within the grace window the same successor).
        again = refresh(http, stack, token)
        assert again.status_code == 200, again.text
        assert refresh(http, stack, again.json()["refresh_token"]).status_code == 200
        assert integrity(stack) == [("ok",)]
    finally:
        stack.stop()
