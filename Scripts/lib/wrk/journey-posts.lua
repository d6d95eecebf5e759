-- The getting-in forms' posts (POST /login/signup, POST /login/forgot) as
-- a browser on the issuer's own page sends them (Origin and Sec-Fetch-Site:
-- SameOriginBrowserPosts), each for an address of its own: the mail limit
-- (5 mails per address an hour) must never spare a request its work.
--   GATEHOUSE_BENCH_PATH     the form's path
--   GATEHOUSE_BENCH_ORIGIN   the issuer
--   GATEHOUSE_BENCH_ADDRESS  string.format pattern of the (URL-encoded) address:
--                            with a pool, of one number (1..pool); without, of
--                            two (thread, request), every address new
--   GATEHOUSE_BENCH_POOL     how many accounts the pattern names (0: no pool)
--   GATEHOUSE_BENCH_THREADS  wrk's -t: the threads share the pool in turn
--   GATEHOUSE_BENCH_FORM     the rest of the form, after the address
-- Only the "Check your email" page with status 200 counts as an answer;
-- anything else is counted apart and its statuses reported.
local counter = 0
local threads = {}
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
    table.insert(threads, thread)
end
function init(args)
    path = os.getenv("GATEHOUSE_BENCH_PATH")
    address = os.getenv("GATEHOUSE_BENCH_ADDRESS")
    pool = tonumber(os.getenv("GATEHOUSE_BENCH_POOL") or "0")
    stride = tonumber(os.getenv("GATEHOUSE_BENCH_THREADS") or "1")
    form = os.getenv("GATEHOUSE_BENCH_FORM")
    form_headers = {["Content-Type"] = "application/x-www-form-urlencoded", ["Origin"] = os.getenv("GATEHOUSE_BENCH_ORIGIN"),
                    ["Sec-Fetch-Site"] = "same-origin"}
    sent, answered, refused, statuses = 0, 0, 0, ""
end
function request()
    sent = sent + 1
    local email
    if pool > 0 then
        -- Thread t takes accounts t, t + threads, t + 2 threads...: the
        -- threads never send one account's request at the same moment.
        email = string.format(address, ((id - 1) + (sent - 1) * stride) % pool + 1)
    else
        email = string.format(address, id, sent)
    end
    return wrk.format("POST", path, form_headers, "email=" .. email .. form)
end
function response(status, headers, body)
    if status == 200 and body:find("Check your email", 1, true) then
        answered = answered + 1
    else
        refused = refused + 1
        if #statuses < 60 then statuses = statuses .. status .. " " end
    end
end
-- Called by report.lua's done(): the answers, summed over threads.
function extra_report()
    local total, others, seen = 0, 0, ""
    for _, thread in ipairs(threads) do
        total = total + (thread:get("answered") or 0)
        others = others + (thread:get("refused") or 0)
        seen = seen .. (thread:get("statuses") or "")
    end
    io.write(string.format('ANSWERS_JSON {"answered":%d,"refused":%d,"refused_statuses":"%s"}\n', total, others, seen))
end
