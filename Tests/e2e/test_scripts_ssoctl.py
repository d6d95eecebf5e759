"""Scripts/ssoctl acts on the stack that runs, not on the defaults: a stack
started with another GATEHOUSE_HOME and GATEHOUSE_BASE_PORT is found without
either in the environment, with the binary that stack runs; two running
stacks are refused as ambiguous; none means var/.

The session's stack runs from this checkout too, so these tests use a copy
of the checkout's scripts and files (no Package.swift: a Scripts/ssoctl that
tried to build or ask swift for its binary folder would fail)."""
import os
import shutil
import subprocess

import pytest

from stack import ROOT, Stack

COPIED = ["Scripts", "nginx", "www", "deploy"]


@pytest.fixture()
def checkout(tmp_path):
    copy = tmp_path / "checkout"
    for name in COPIED:
        shutil.copytree(os.path.join(ROOT, name), copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    os.chmod(tmp_path, 0o755)  # the stack's users read www/ in it
    return copy


def scripts_ssoctl(checkout, *args):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("GATEHOUSE_") and key != "BIN_DIR"}
    return subprocess.run([str(checkout / "Scripts" / "ssoctl"), *args], env=environment, capture_output=True, text=True,
                          timeout=60, cwd="/")


def config_line(result):
    return next(line for line in result.stdout.splitlines() if line.split("  ")[1] == "config")


def test_scripts_ssoctl_finds_the_running_stacks_home_port_and_binary(checkout):
    stack = Stack(root=checkout, extra_env={"GATEHOUSE_APPLE_TEAM_ID": "TEAMFROMRUN"}).start()
    second = None
    try:
        clients = scripts_ssoctl(checkout, "client", "list")
        assert clients.returncode == 0, clients.stderr
        assert "mobile-app-001" in clients.stdout, "the running stack's database, with its demo clients"
        doctor = scripts_ssoctl(checkout, "doctor")
        assert config_line(doctor) == f"ok  config  issuer https://localhost:{stack.base}, home {stack.home}", doctor.stdout
        with open(os.path.join(stack.home, "gatehouse.conf")) as handle:
            settings = handle.read().splitlines()
        assert f"GATEHOUSE_BASE_PORT={stack.base}" in settings and "GATEHOUSE_APPLE_TEAM_ID=TEAMFROMRUN" in settings
        assert not [line for line in settings if line.startswith(("GATEHOUSE_DEMO_PASSWORD", "GATEHOUSE_HOME"))], settings

        second = Stack(root=checkout).start()
        ambiguous = scripts_ssoctl(checkout, "client", "list")
        assert ambiguous.returncode == 1 and "2 stacks are running; say which with GATEHOUSE_HOME=..." in ambiguous.stderr
        assert stack.home in ambiguous.stderr and second.home in ambiguous.stderr
    finally:
        stack.remove()
        if second:
            second.remove()
    assert not os.listdir(checkout / "var" / "stacks"), "each Scripts/run removed its note"
    alone = subprocess.run([str(checkout / "Scripts" / "ssoctl"), "doctor"], capture_output=True, text=True, timeout=60,
                           env={key: value for key, value in os.environ.items() if not key.startswith("GATEHOUSE_")}, cwd="/")
    assert f" {checkout}/var/gatehouse.conf" in config_line(alone), "no stack running: var/ of the checkout"
