"""Faults on stacks of their own: responders killed under load, the issuer's
JWKS responders frozen while the resource servers keep validating, the
database write-locked by another process for longer than the busy timeout,
a full disk (a small loop-mounted filesystem) and a database whose files
refuse writes."""
import contextlib
import errno
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time

import pytest
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
            deadline = time.monotonic() + 30
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
        assert len(killed) >= 25, killed
        assert restarts >= len(killed)
        assert sent >= 1000, results
        assert failed / sent < 0.01, (results, failures[:10])
        assert all(sent_kind > 0 for sent_kind, _ in results.values()), results
        assert integrity(stack) == [("ok",)]
    finally:
        stack.remove()


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
            # no-cache: past nginx's 2-second copy, to the frozen responders.
            down = http.get(stack.issuer + "/.well-known/jwks.json", headers={"Cache-Control": "no-cache"}, timeout=2)
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
        stack.remove()


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
        stack.remove()


@contextlib.contextmanager
def small_filesystem(megabytes=64):
    """A size-limited ext4 filesystem on a loop device (root only): the one
    honest way to make a disk full without filling the machine's disk."""
    folder = tempfile.mkdtemp(prefix="gatehouse-disk-")
    image, mountpoint = os.path.join(folder, "disk.img"), os.path.join(folder, "mnt")
    os.mkdir(mountpoint)
    with open(image, "wb") as handle:
        handle.truncate(megabytes * 1024 * 1024)
    # -m 0: no blocks reserved for root, so "full" is full for the responders too.
    subprocess.run(["mkfs.ext4", "-q", "-m", "0", image], check=True)
    subprocess.run(["mount", "-o", "loop", image, mountpoint], check=True)
    try:
        home = os.path.join(mountpoint, "home")
        os.mkdir(home)
        yield home
    finally:
        subprocess.run(["umount", "-l", mountpoint], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def fill(folder):
    """Writes a filler file until the filesystem says ENOSPC; returns its path."""
    path = os.path.join(folder, "filler")
    with open(path, "wb", buffering=0) as handle:
        for chunk in (1 << 20, 4096, 512):
            try:
                while True:
                    handle.write(b"\0" * chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
    return path


def reads_still_answer(stack, http, access):
    """The paths that only read (JWKS, discovery, bearer validation at both
    APIs, userinfo) keep answering 200 while writes cannot happen."""
    return [http.get(stack.issuer + "/.well-known/jwks.json", timeout=10).status_code,
            http.get(stack.issuer + "/.well-known/openid-configuration", timeout=10).status_code,
            http.get(stack.api_a + "/api/data", headers={"Authorization": "Bearer " + access}, timeout=10).status_code,
            http.get(stack.api_b + "/api/records", headers={"Authorization": "Bearer " + access}, timeout=10).status_code,
            http.get(stack.issuer + "/userinfo", headers={"Authorization": "Bearer " + access}, timeout=10).status_code]


def writes_until_refused(http, stack, token, attempts=300):
    """Refresh (a write) and sign in again until storage refuses one. SQLite
    reuses its WAL file's space, so the first writes after the disk filled may
    still fit; every answer must be a 200 or a 503 with Retry-After."""
    answers = []
    for number in range(attempts):
        response = refresh(http, stack, token)
        answers.append((response.status_code, response.headers.get("Retry-After"), response.text[:100]))
        if response.status_code == 200:
            token = response.json()["refresh_token"]
        elif response.status_code == 503:
            return token, answers
        if number % 10 == 9:  # a burst of new rows: a fresh sign-in writes session, code and tokens
            try:
                signed_in(stack)
            except (AssertionError, ValueError, KeyError):
                pass
    return token, answers


def assert_recovered(http, stack, token):
    """After the fault clears: nothing was spent while writes failed, so the
    same refresh token rotates, its successor too, a new sign-in works, and
    the database passes its integrity check."""
    recovered = refresh(http, stack, token)
    assert recovered.status_code == 200, recovered.text
    assert refresh(http, stack, recovered.json()["refresh_token"]).status_code == 200
    assert "access_token" in signed_in(stack)[2]
    assert integrity(stack) == [("ok",)]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a size-limited filesystem needs root")
def test_a_full_disk_gives_503_with_retry_after_keeps_reads_serving_and_recovers_when_space_frees():
    with small_filesystem() as home:
        stack = Stack(home=home, extra_env=FAST).start()
        try:
            http, _, tokens = signed_in(stack)
            token, access = tokens["refresh_token"], tokens["access_token"]
            filler = fill(os.path.dirname(home))

            token, answers = writes_until_refused(http, stack, token)
            print(f"\ndisk full: {len(answers)} writes until refused, last {answers[-1]}")
            assert all(status in (200, 503) for status, *_ in answers), answers
            status, retry_after, body = answers[-1]
            assert status == 503 and retry_after and retry_after.isdigit(), answers[-3:]
            assert "temporarily_unavailable" in body
            assert reads_still_answer(stack, http, access) == [200] * 5

            os.remove(filler)
            assert_recovered(http, stack, token)
        finally:
            stack.remove()


def test_a_database_that_refuses_writes_gives_503_keeps_reads_serving_and_recovers():
    # As root, file modes do not stop writes; the immutable attribute does
    # (chattr +i, ext4): every write to the database and its WAL fails with
    # EPERM, which SQLite reports as SQLITE_IOERR, as it would for a
    # filesystem remounted read-only after an error. The shared-memory index
    # (-shm) stays writable: it is mmap'd, and a write into an immutable
    # mapping is a SIGBUS, not an error code.
    stack = Stack(extra_env=FAST).start()
    database = os.path.join(stack.home, "gatehouse.sqlite")
    frozen = [database, database + "-wal"]
    try:
        http, _, tokens = signed_in(stack)
        token, access = tokens["refresh_token"], tokens["access_token"]
        subprocess.run(["chattr", "+i", *frozen], check=True)
        try:
            refused = [refresh(http, stack, token) for _ in range(3)]
            assert [response.status_code for response in refused] == [503] * 3, [r.text for r in refused]
            assert all(response.headers.get("Retry-After", "").isdigit() for response in refused)
            assert all(response.json()["error"] == "temporarily_unavailable" for response in refused)
            assert reads_still_answer(stack, http, access) == [200] * 5
            # The ops listener: not ready (a load balancer stops sending
            # sign-ins here), yet live (nothing to restart), and says why.
            ready = requests.get(stack.ops + "/health/ready", timeout=15)
            assert ready.status_code == 503 and ready.json()["status"] == "not_ready", ready.text
            assert ready.json()["reason"].startswith("database write failed") and ready.json()["checks"]["signing_key"].startswith("ok")
            assert requests.get(stack.ops + "/health/live", timeout=15).status_code == 200
            assert "gatehouse_ready 0.0" in requests.get(stack.ops + "/metrics", timeout=15).text
        finally:
            subprocess.run(["chattr", "-i", *frozen], check=True)
        assert_recovered(http, stack, token)
        assert requests.get(stack.ops + "/health/ready", timeout=15).status_code == 200
    finally:
        stack.remove()
