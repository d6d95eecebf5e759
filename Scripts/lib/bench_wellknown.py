"""Scripts/bench --wellknown-ceiling: how close nginx can bring the JWKS to
`return 200`, and what the 2-second copy costs on the way.

Three answers in alternated rounds on one stack (best of each): the bare
nginx's `return 200`; the JWKS as served (nginx's copy of the responder's
answer, gatehouse-wellknown-cache.conf); and the same body held in nginx's
memory (a `return 200` of it in the same location, with the same headers),
which stock nginx can only refresh by reloading its configuration and is
therefore not shipped. Beside each, the CPU that nginx's workers and wrk
spent per request, which moves less between runs than requests per second.
Only this bench's own temporary stack is reconfigured."""
import os
import resource
import signal
import subprocess
import time

ROUNDS = 3
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


def wellknown_ceiling(stack, physical, seconds, connections, threads, wrk):
    """The rows: return 200, the JWKS as served, and as held in memory."""
    url = stack.issuer + LOCATION.split()[2]
    config = os.path.join(stack.home, "nginx", "nginx.conf")
    served_text = open(config).read()
    served = stack.session().get(url)
    variants = {"served": served_text, "memory": _held_in_memory(served_text, served)}
    best = {}
    try:
        for round in range(ROUNDS):
            names = ["static", "served", "memory"]
            for name in names[round % 3:] + names[:round % 3]:  # the order rotates
                if name == "static":
                    master = int(open(os.path.join(physical.folder, "nginx.pid")).read())
                    result = _measured(physical.static, seconds, connections, threads, wrk, master)
                else:
                    master = _reload(stack, variants[name])
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
             best["memory"]["rps"] / static["rps"], None)]
