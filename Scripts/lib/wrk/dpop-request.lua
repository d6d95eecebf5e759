-- GET load with DPoP: the bound access token in `Authorization: DPoP`, and
-- a fresh proof per request from the list bench_dpop.py signed just before
-- the run (each proof is sent once: the API refuses a proof it has seen).
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end
function init(args)
    proofs = {}
    local file = io.open(os.getenv("GATEHOUSE_BENCH_PROOFS") .. "." .. id, "r")
    for line in file:lines() do table.insert(proofs, line) end
    file:close()
    next_proof = 1
    token = os.getenv("GATEHOUSE_BENCH_TOKEN")
end
function request()
    local proof = proofs[next_proof] or "exhausted"
    next_proof = next_proof + 1
    return wrk.format("GET", nil, {["Authorization"] = "DPoP " .. token, ["DPoP"] = proof})
end
