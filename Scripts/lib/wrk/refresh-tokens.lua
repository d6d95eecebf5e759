-- Refresh-grant load: every refresh spends its token, so each thread keeps a
-- queue of live tokens (independent families), sends the oldest, and queues
-- the successor each reply carries.
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end
function init(args)
    queue = {}
    local file = io.open(os.getenv("GATEHOUSE_BENCH_REFRESH") .. "." .. id, "r")
    for line in file:lines() do table.insert(queue, line) end
    file:close()
end
function request()
    local token = table.remove(queue, 1) or "exhausted"
    return wrk.format("POST", "/token", {["Content-Type"] = "application/x-www-form-urlencoded"},
        "grant_type=refresh_token&client_id=mobile-app-001&refresh_token=" .. token)
end
function response(status, headers, body)
    local token = body:match('"refresh_token":"([^"]+)"')
    if token then table.insert(queue, token) end
end
