-- Refresh-grant load with DPoP: as refresh-tokens.lua, plus a fresh proof
-- per request. Every family is bound to the one bench key, so any proof
-- fits any token; the proofs were signed just before the run (bench_dpop.py)
-- and each is sent once (the issuer refuses a proof it has seen).
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end
local function lines(path)
    local result = {}
    local file = io.open(path, "r")
    for line in file:lines() do table.insert(result, line) end
    file:close()
    return result
end
function init(args)
    queue = lines(os.getenv("GATEHOUSE_BENCH_REFRESH") .. "." .. id)
    proofs = lines(os.getenv("GATEHOUSE_BENCH_PROOFS") .. "." .. id)
    next_proof = 1
end
function request()
    local token = table.remove(queue, 1) or "exhausted"
    local proof = proofs[next_proof] or "exhausted"
    next_proof = next_proof + 1
    return wrk.format("POST", "/token", {["Content-Type"] = "application/x-www-form-urlencoded", ["DPoP"] = proof},
        "grant_type=refresh_token&client_id=mobile-app-001&refresh_token=" .. token)
end
function response(status, headers, body)
    local token = body:match('"refresh_token":"([^"]+)"')
    if token then table.insert(queue, token) end
end
