"""Scripts/bench's cost of the metrics: GET /api/data on a stack that counts
every request (the default) against a second stack started with
GATEHOUSE_METRICS=off, which counts none, in alternated rounds of the same
run (best of each). The ops listener's target: counting costs at most 3%."""
from oidc_flow import App

ROUNDS = 3


def api_data_rate(stack, seconds, connections, threads, wrk):
    app = App(stack, stack.session())
    token = app.exchange(app.sign_in()).json()["access_token"]
    return wrk(stack.api_a + "/api/data", seconds, connections, threads, headers=["Authorization: Bearer " + token])


def metrics_cost(counting, start_stack, seconds, connections, threads, wrk):
    """The row: /api/data with metrics, and its ratio to the same without."""
    silent = start_stack({"GATEHOUSE_METRICS": "off"})
    try:
        best = {"on": None, "off": None}
        for _ in range(ROUNDS):
            for name, stack in (("on", counting), ("off", silent)):
                result = api_data_rate(stack, seconds, connections, threads, wrk)
                if best[name] is None or result["rps"] > best[name]["rps"]:
                    best[name] = result
    finally:
        silent.remove()
    return [("GET /api/data with GATEHOUSE_METRICS=off (reference)", best["off"], None, None),
            ("GET /api/data counted for /metrics", best["on"], best["on"]["rps"] / best["off"]["rps"], "≥ 0.97 of uncounted")]
