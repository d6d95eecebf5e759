"""Scripts/bench --wellknown-ceiling: how close nginx can bring the JWKS to
`return 200`, and what the 2-second copy costs on the way.

Four answers in alternated rounds on one stack (best of each): the bare
nginx's `return 200`; the JWKS as served (nginx's copy of the responder's
answer, gatehouse-wellknown-cache.conf); the same body held in nginx's
memory (a `return 200` of it in the same location, with the same headers),
which stock nginx can only refresh by reloading its configuration; and the
same body as a static file that nginx keeps open (what a responder writing
its answer to disk would give). The last two are not shipped. Beside each,
the CPU that nginx's workers and wrk spent per request, which moves less
between runs than requests per second.
Only this bench's own temporary stack is reconfigured."""
import os
import resource
import signal
import subprocess
import time

ROUNDS = 4  # each variant leads once
LOCATION = "location = /.well-known/jwks.json {"


def _cpu_seconds(pids):
    """User and system time of the processes still alive."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def _children(pid):
    return set(subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split())


def _measured(url, seconds, connections, threads, wrk, nginx_master):
    """One wrk run, with the CPU nginx's workers and wrk spent per request."""
    workers = _children(nginx_master)
    before, wrk_before = _cpu_seconds(workers), resource.getrusage(resource.RUSAGE_CHILDREN)
    result = wrk(url, seconds, connections, threads)
    after, wrk_after = _cpu_seconds(workers), resource.getrusage(resource.RUSAGE_CHILDREN)
    requests = result["requests"]  # wrk's own count, over the time it really ran
    wrk_seconds = (wrk_after.ru_utime + wrk_after.ru_stime) - (wrk_before.ru_utime + wrk_before.ru_stime)
    result["nginx_us"] = (after - before) / requests * 1e6
    result["wrk_us"] = wrk_seconds / requests * 1e6
    result["cpu"] = f"nginx {result['nginx_us']:.1f} µs, wrk {result['wrk_us']:.1f} µs a request"
    return result


def _reload(stack, text):
    """Writes the stack's nginx.conf and waits until only workers started from it are left."""
    master = int(open(os.path.join(stack.home, "run", "nginx.pid")).read())
    with open(os.path.join(stack.home, "nginx", "nginx.conf"), "w") as handle:
        handle.write(text)
    old = _children(master)
    os.kill(master, signal.SIGHUP)
    deadline = time.time() + 15
    while time.time() < deadline:
        now = _children(master)
        if now and not (now & old):
            return master
        time.sleep(0.1)
    raise RuntimeError("nginx did not replace its workers after the reload")


def _held_in_memory(served_text, served):
    """The served configuration with the JWKS location answering its body
    from memory, with the headers the copy carries (the security headers and
    X-Request-Id stay, from the location's own add_header lines)."""
    body = served.text
    # In a `return` string nginx reads `$` as a variable and `\` and `'` as escapes.
    if any(character in body for character in "$\\'"):
        raise RuntimeError("the JWKS holds a character a return string cannot carry as is")
    held = (f"{LOCATION}\n            default_type application/json;\n"
            f"            add_header Cache-Control \"{served.headers['Cache-Control']}\" always;\n"
            f"            add_header ETag '{served.headers['ETag']}' always;\n"
            f"            return 200 '{body}';")
    return served_text.replace(LOCATION, held, 1)


def _as_static_file(served_text, served, folder):
    """The served configuration with the JWKS location answering a file
    holding the same body, kept open as the copy is, with the same headers:
    the location's own security-header and CSP lines stay, the cache's
    lines give way to the file's."""
    os.makedirs(folder, mode=0o755, exist_ok=True)
    path = os.path.join(folder, "jwks.json")
    with open(path, "w") as handle:
        handle.write(served.text)
    os.chmod(path, 0o644)
    start = served_text.index(LOCATION)
    end = served_text.index("}", start)
    kept = [line for line in served_text[start:end].splitlines()
            if "security-headers" in line or "Content-Security-Policy" in line]
    block = "\n".join([LOCATION, "            default_type application/json;",
                       f"            add_header Cache-Control \"{served.headers['Cache-Control']}\" always;",
                       "            add_header X-Request-Id $request_id always;",
                       "            open_file_cache max=16 inactive=10s;",
                       "            open_file_cache_valid 1s;",
                       f"            alias {path};"] + kept) + "\n        "
    return served_text[:start] + block + served_text[end:]


def _check_same_answer(stack, url, served):
    """A variant is compared only if it answers what the responder does:
    the same body and the same headers, bar the per-answer ones."""
    answer = stack.session().get(url)
    per_answer = {"date", "x-request-id", "etag", "last-modified", "accept-ranges"}
    differing = {name for name in set(answer.headers) | set(served.headers)
                 if name.lower() not in per_answer and answer.headers.get(name) != served.headers.get(name)}
    if answer.status_code != 200 or answer.text != served.text or differing:
        raise RuntimeError(f"a JWKS variant answers differently ({answer.status_code}, headers {sorted(differing)})")


def wellknown_ceiling(stack, physical, seconds, connections, threads, wrk):
    """The rows: return 200, the JWKS as served, as held in memory and as a file."""
    url = stack.issuer + LOCATION.split()[2]
    config = os.path.join(stack.home, "nginx", "nginx.conf")
    served_text = open(config).read()
    served = stack.session().get(url)
    variants = {"served": served_text, "memory": _held_in_memory(served_text, served),
                "file": _as_static_file(served_text, served, os.path.join(stack.home, "wellknown-file"))}
    best = {}
    try:
        for round in range(ROUNDS):
            names = ["static", "served", "memory", "file"]
            for name in names[round % 4:] + names[:round % 4]:  # the order rotates
                if name == "static":
                    master = int(open(os.path.join(physical.folder, "nginx.pid")).read())
                    result = _measured(physical.static, seconds, connections, threads, wrk, master)
                else:
                    master = _reload(stack, variants[name])
                    _check_same_answer(stack, url, served)
                    result = _measured(url, seconds, connections, threads, wrk, master)
                if name not in best or result["rps"] > best[name]["rps"]:
                    best[name] = result
    finally:
        _reload(stack, served_text)
    static = best["static"]
    return [("nginx return 200, bare nginx (reference)", static, None, None),
            ("GET /.well-known/jwks.json as served (2-second copy)", best["served"],
             best["served"]["rps"] / static["rps"], "≥ 0.80 of nginx"),
            ("the same JWKS held in nginx's memory (not shipped)", best["memory"],
             best["memory"]["rps"] / static["rps"], None),
            ("the same JWKS as a file nginx keeps open (not shipped)", best["file"],
             best["file"]["rps"] / static["rps"], None)]
