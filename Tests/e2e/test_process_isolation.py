"""Who may talk to whom in the Scripts/run layout (started as root, as the
tests are): the responders run as `gatehouse`, nginx's workers as
`gatehouse-web`, and the responder sockets (gatehouse:gatehouse-web 0660)
admit nginx's workers and no other local user, so nobody can speak FastCGI
to a responder and set REMOTE_ADDR, Origin or Sec-Fetch-Site itself. ssoctl
started as root becomes the home's owner, so what it writes stays usable."""
import grp
import json
import os
import pwd
import subprocess
import sys
import tempfile

import pytest

from oidc_flow import App
from stack import ROOT, Stack

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the separate users exist only when Scripts/run runs as root")

# Run as another user: one FastCGI request for discovery on a responder's
# socket, with a forged client address; prints the status line or the errno.
FASTCGI_AS_ANOTHER_USER = f"""
import errno, socket, sys
sys.path.insert(0, {os.path.join(ROOT, "Scripts", "lib")!r})
from fcgi_probe import read_answer, request_bytes
try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(sys.argv[1])
        client.sendall(request_bytes("GET", "/.well-known/openid-configuration", "localhost"))
        answer = read_answer(client, 10)
        print(answer.split(b"\\r\\n", 1)[0].decode() or "no status line")
except OSError as error:
    print(errno.errorcode[error.errno])
"""


# Debian's python3: the test's own interpreter may live under /root.
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def fastcgi_as(user, socket_path):
    result = subprocess.run(["runuser", "-u", user, "--", SYSTEM_PYTHON, "-I", "-c", FASTCGI_AS_ANOTHER_USER, socket_path],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def ids(pid):
    """Real, effective, saved and filesystem uid of a process, and its gids."""
    with open(f"/proc/{pid}/status") as handle:
        fields = dict(line.split(":", 1) for line in handle if ":" in line)
    return [int(value) for value in fields["Uid"].split()], [int(value) for value in fields["Gid"].split()]


def children(parent):
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == parent:
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_responders_run_as_gatehouse_and_nginx_workers_as_gatehouse_web(stack):
    gatehouse, web = pwd.getpwnam("gatehouse"), pwd.getpwnam("gatehouse-web")
    slots = [name[:-4] for name in os.listdir(os.path.join(stack.home, "run", "pids")) if name.endswith(".pid") and name != "nginx.pid"]
    assert len(slots) == 2 * 14 + 1, slots  # 12 issuer responders (ops and admin included), api-a, api-b; the mail sender
    for slot in slots:
        assert ids(stack.pid(slot)) == ([gatehouse.pw_uid] * 4, [gatehouse.pw_gid] * 4), slot
    master = stack.pid("nginx")
    assert ids(master)[0] == [0] * 4, "nginx's master reads the TLS key as root"
    workers = children(master)
    assert workers, "nginx has workers"
    for worker in workers:
        assert ids(worker) == ([web.pw_uid] * 4, [web.pw_gid] * 4), worker


def test_only_nginx_workers_can_connect_to_a_responder_socket(stack, http):
    socket_path = os.path.join(stack.home, "run", "discovery-0.sock")
    assert fastcgi_as("nobody", socket_path) == "EACCES", "nobody was nginx's worker user; now a stranger"
    assert fastcgi_as("gatehouse-web", socket_path) == "Status: 200 OK", "nginx's workers' user gets an answer"
    assert http.get(stack.issuer + "/.well-known/openid-configuration").status_code == 200, "and so through nginx"
    for name in os.listdir(os.path.join(stack.home, "run")):
        if name.endswith(".sock"):
            assert fastcgi_as("nobody", os.path.join(stack.home, "run", name)) == "EACCES", name


def owner_and_mode(path):
    info = os.stat(path)
    return pwd.getpwuid(info.st_uid).pw_name, info.st_mode & 0o777


def test_ssoctl_as_root_becomes_the_homes_owner_so_a_rotated_key_signs():
    stack = Stack().start()
    try:
        rotated = stack.ssoctl("keys", "rotate", "--now")
        assert rotated.returncode == 0, rotated.stderr
        kid = rotated.stdout.split()[-1]
        assert owner_and_mode(os.path.join(stack.home, "keys", kid + ".pem")) == ("gatehouse", 0o600)
        assert stack.ssoctl("user", "add", "carol@example.com", "--name", "Carol", "--password-stdin",
                            input="a long enough password\n").returncode == 0
        for name in os.listdir(stack.home):
            if name.startswith("gatehouse.sqlite"):
                assert owner_and_mode(os.path.join(stack.home, name))[0] == "gatehouse", name
        app = App(stack, stack.session())
        tokens = app.exchange(app.sign_in())
        assert tokens.status_code == 200, tokens.text
        header = tokens.json()["id_token"].split(".")[0]
        assert json.loads(__import__("base64").urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"] == kid
    finally:
        stack.remove()


def test_ssoctl_as_root_keeps_a_root_home_root_and_a_users_home_that_users():
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GATEHOUSE_")}
    ssoctl = os.path.join(os.environ["BIN_DIR"], "ssoctl")
    for owner in ("gatehouse", "root"):
        with tempfile.TemporaryDirectory(prefix="gatehouse-owner-") as home:
            os.chmod(home, 0o711)
            os.chown(home, pwd.getpwnam(owner).pw_uid, grp.getgrnam(owner).gr_gid)
            result = subprocess.run([ssoctl, "setup"], env=dict(environment, GATEHOUSE_HOME=home), capture_output=True,
                                    text=True, timeout=60)
            assert result.returncode == 0, result.stderr
            made = [os.path.join(folder, name) for folder, folders, files in os.walk(home) for name in folders + files]
            assert made and {owner_and_mode(path)[0] for path in made} == {owner}, (owner, made)
    help_text = subprocess.run([ssoctl, "--help"], capture_output=True, text=True).stdout
    assert "Started as root on a home that belongs to another user" in help_text
