"""Scripts/bench's cost of the metrics: GET /api/data on a stack that counts
every request (the default) against a second stack started with
GATEHOUSE_METRICS=off, which counts none, in alternated rounds of the same
run (best of each; which goes first alternates too). The ops listener's target: counting costs at most 3%."""
from oidc_flow import App

ROUNDS = 4


def api_data_rate(stack, seconds, connections, threads, wrk):
    app = App(stack, stack.session())
    token = app.exchange(app.sign_in()).json()["access_token"]
    return wrk(stack.api_a + "/api/data", seconds, connections, threads, headers=["Authorization: Bearer " + token])


def metrics_cost(counting, start_stack, seconds, connections, threads, wrk):
    """The row: /api/data with metrics, and its ratio to the same without."""
    silent = start_stack({"GATEHOUSE_METRICS": "off"})
    try:
        best = {"on": None, "off": None}
        for round in range(ROUNDS):
            # Which stack goes first alternates, so neither gains from the order.
            order = (("on", counting), ("off", silent))
            for name, stack in (order if round % 2 == 0 else order[::-1]):
                result = api_data_rate(stack, seconds, connections, threads, wrk)
                if best[name] is None or result["rps"] > best[name]["rps"]:
                    best[name] = result
    finally:
        silent.remove()
    return [("GET /api/data with GATEHOUSE_METRICS=off (reference)", best["off"], None, None),
            ("GET /api/data counted for /metrics", best["on"], best["on"]["rps"] / best["off"]["rps"], "≥ 0.97 of uncounted")]
