"""docs/DEPLOY.md section 1 names the Debian packages a server and a build
machine need; these tests hold the lists to what the build really needs:

- the runtime list holds the package of every shared library a deployed
  release binary links (`ldd` on each executable, `dpkg -S` on each library) and of
  the one it loads at run time (libpq, dlopen'ed by Sources/CPostgreSQL),
  except what apt-get itself links (glibc, the GCC runtime: present
  wherever the page's apt-get runs); a library a binary links itself is
  named, one that only another library links may come as that one's
  dependency (apt-get installs it too);
- the build list holds every -dev package the package's system-library
  targets name (`swift package dump-package`), the package of their
  pkg-config files, and the package of every header the C modules include.

A server set up from a list that missed one failed with "libqrencode.so.4:
cannot open shared object file"."""
import functools
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_DOC = ROOT / "docs" / "DEPLOY.md"
C_MODULES = ROOT / "Sources"


def prerequisites_section():
    text = DEPLOY_DOC.read_text()
    return text[text.index("## 1. Prerequisites"):text.index("## 2. ")]


def installed_by(text):
    """The packages the `apt-get install` commands of `text` name (continuation lines joined)."""
    packages = set()
    # Continuations joined first: a greedy [^\n]* would otherwise take the
    # backslash and end the command at the first line.
    for command in re.findall(r"apt-get install ([^\n]*)", text.replace("\\\n", " ")):
        packages |= {word for word in command.split() if not word.startswith("-")}
    return packages


def runtime_list():
    section = prerequisites_section()
    return installed_by(section[:section.index("- A build machine")])


def build_list():
    section = prerequisites_section()
    return installed_by(section[section.index("- A build machine"):])


@functools.cache
def package_of(path):
    """The Debian package that installed `path` (Debian 12 merges /lib into /usr/lib: ask for both spellings)."""
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    for candidate in dict.fromkeys([path, real]):
        owner = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if owner.returncode == 0:
            return owner.stdout.split(":")[0]
    pytest.fail(f"no Debian package owns {path}")


def linked_libraries(executable):
    output = subprocess.run(["ldd", str(executable)], capture_output=True, text=True, check=True).stdout
    assert "not found" not in output, output
    return set(re.findall(r"=> (/\S+)", output))


def packages_linked_by(executable):
    return {package_of(library) for library in linked_libraries(executable)}


def packages_linked_directly_by(executable):
    """The packages of the libraries `executable` names itself (its NEEDED
    entries), not those its libraries bring."""
    dynamic = subprocess.run(["readelf", "-d", str(executable)], capture_output=True, text=True, check=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    resolved = subprocess.run(["ldd", str(executable)], capture_output=True, text=True, check=True).stdout
    paths = dict(re.findall(r"^\s*(\S+) => (/\S+)", resolved, re.M))
    return {package_of(paths[soname]) for soname in needed if soname in paths}


@functools.cache
def depends_of(package):
    """The installed packages `package` depends on (Depends and Pre-Depends, every alternative)."""
    fields = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package],
                            capture_output=True, text=True)
    if fields.returncode != 0:
        return frozenset()
    names = {alternative.split()[0].split(":")[0]
             for dependency in fields.stdout.split(",") for alternative in dependency.split("|") if alternative.strip()}
    return frozenset(names)


def installed_with(packages):
    """`packages` and everything apt-get installs with them: what a library
    such as libcurl4 brings (nghttp2, libssh2, Kerberos, ...) needs no line
    of its own on the page."""
    closure, pending = set(), list(packages)
    while pending:
        package = pending.pop()
        if package not in closure:
            closure.add(package)
            pending.extend(depends_of(package))
    return closure


def release_executables():
    """The release binaries section 2 copies to the server (not hello-fcgi, not gatehouse-login)."""
    copied = re.search(r"`\$B/\{([a-z,-]+)\}`", DEPLOY_DOC.read_text()).group(1).split(",")
    assert {"token", "api-a", "ssoctl"} <= set(copied), copied
    binaries = Path(os.environ["BIN_DIR"])
    return [binaries / name for name in copied]


def loaded_at_run_time():
    """The sonames Sources/ dlopen()s, resolved as the dynamic loader would find them."""
    sonames = set()
    for source in C_MODULES.rglob("*.c"):
        sonames |= set(re.findall(r'dlopen\("([^"]+)"', source.read_text()))
    assert "libpq.so.5" in sonames
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    paths = set()
    for soname in sonames:
        match = re.search(rf"^\s*{re.escape(soname)} \([^)]*x86-64[^)]*\) => (\S+)$", cache, re.M) \
            or re.search(rf"^\s*{re.escape(soname)} .*=> (\S+)$", cache, re.M)
        assert match, f"{soname} is not installed here (Scripts/test installs postgresql, which brings libpq5)"
        paths.add(match.group(1))
    return paths


def test_the_runtime_list_names_every_library_the_release_binaries_link_or_load():
    always_there = packages_linked_by(shutil.which("apt-get"))
    named, needed = {}, {}
    for executable in release_executables():
        for package in packages_linked_directly_by(executable) - always_there:
            named.setdefault(package, executable.name)
        for package in packages_linked_by(executable) - always_there:
            needed.setdefault(package, executable.name)
    for library in loaded_at_run_time():
        named.setdefault(package_of(library), "dlopen")
    assert {"libqrencode4", "libssl3", "libfcgi0ldbl", "libpq5"} <= set(named), named
    # What a binary links itself is named on the page; what those
    # libraries link in turn may come as their dependencies.
    missing = {package: user for package, user in named.items() if package not in runtime_list()}
    assert not missing, f"docs/DEPLOY.md section 1 does not install {missing} (package: the binary that needs it)"
    installed = installed_with(runtime_list())
    missing = {package: user for package, user in needed.items() if package not in installed}
    assert not missing, f"docs/DEPLOY.md section 1 installs neither {missing} nor a package that depends on it"


def test_the_runtime_list_names_no_library_nothing_needs():
    linked = set()
    for executable in release_executables():
        linked |= packages_linked_by(executable)
    linked |= {package_of(library) for library in loaded_at_run_time()}
    # Library packages only: the tools (nginx, sqlite3, curl, jq, ...) are for the page's commands.
    stale = {package for package in runtime_list() if re.fullmatch(r"lib.*\d(ldbl)?", package)} - linked
    assert not stale, f"docs/DEPLOY.md section 1 installs libraries no binary links or loads: {stale}"


def system_library_targets():
    manifest = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert manifest.returncode == 0, manifest.stderr
    return [target for target in json.loads(manifest.stdout)["targets"] if target["type"] == "system"]


def apt_providers(target):
    return {package for provider in target.get("providers") or [] for package in provider.get("apt", [[]])[0]}


def pkg_config_file(name):
    directory = subprocess.run(["pkg-config", "--variable=pcfiledir", name], capture_output=True, text=True)
    assert directory.returncode == 0, f"pkg-config does not know {name}: {directory.stderr}"
    return os.path.join(directory.stdout.strip(), name + ".pc")


def included_headers():
    """The headers the C modules include with <...>, as files under /usr/include."""
    multiarch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip()
    headers = set()
    for source in [*C_MODULES.glob("C*/**/*.h"), *C_MODULES.glob("C*/**/*.c")]:
        for name in re.findall(r"^#include <([^>]+)>", source.read_text(), re.M):
            for base in ("/usr/include", f"/usr/include/{multiarch}"):
                if os.path.exists(os.path.join(base, name)):
                    headers.add(os.path.join(base, name))
                    break
            else:
                pytest.fail(f"{source.relative_to(ROOT)} includes <{name}>, which no installed package provides")
    return headers


def test_the_build_list_names_every_dev_package_the_c_modules_need():
    needed = {}
    for target in system_library_targets():
        for package in apt_providers(target):
            needed.setdefault(package, f"{target['name']} (its provider in Package.swift)")
        if target.get("pkgConfig"):
            needed.setdefault("pkg-config", f"{target['name']} (pkgConfig)")
            needed.setdefault(package_of(pkg_config_file(target["pkgConfig"])), f"{target['name']} ({target['pkgConfig']}.pc)")
    # glibc's own headers come with the Swift toolchain's prerequisites (README, "Installing Swift on Debian 12").
    toolchain = {"libc6-dev", "linux-libc-dev"}
    for header in included_headers():
        package = package_of(header)
        if package not in toolchain:
            needed.setdefault(package, header)
    assert {"libqrencode-dev", "libpq-dev", "libfcgi-dev"} <= set(needed), needed
    missing = {package: why for package, why in needed.items() if package not in build_list()}
    assert not missing, f"docs/DEPLOY.md section 1's build list lacks {missing}"
