-- POSTs one unused code per request to /token (each code works once).
local counter = 0
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
end
function init(args)
    codes = {}
    local base = os.getenv("GATEHOUSE_BENCH_CODES")
    for file_id = 1, 8 do
        local file = io.open(base .. "." .. file_id, "r")
        if file then
            for line in file:lines() do table.insert(codes, line) end
            file:close()
        end
    end
    threads_total = tonumber(os.getenv("GATEHOUSE_BENCH_THREADS"))
    index = id
    form_tail = os.getenv("GATEHOUSE_BENCH_FORM")
end
function request()
    local code = codes[index]
    index = index + threads_total
    if code == nil then code = "exhausted" end
    return wrk.format("POST", "/token", {["Content-Type"] = "application/x-www-form-urlencoded"},
        "grant_type=authorization_code&code=" .. code .. form_tail)
end
