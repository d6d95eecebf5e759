-- Calls /authorize with a live SSO cookie and writes each code from the
-- Location header to a file per thread, for the code-exchange run.
local counter = 0
local threads = {}
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
    table.insert(threads, thread)
end
function init(args)
    out = io.open(os.getenv("GATEHOUSE_BENCH_CODES") .. "." .. id, "w")
end
function response(status, headers, body)
    local location = headers["Location"]
    if location then
        local code = location:match("[?&]code=([^&]+)")
        if code then out:write(code, "\n") end
    end
end
