-- The full browser sign-in, as a state machine per connection: GET
-- /authorize (no SSO cookie) → POST /login (password: one scrypt) → POST
-- /token (the code exchange: two RSA signatures). Run with one connection
-- per thread (-c N -t N), so each thread's replies arrive in its own order.
local counter = 0
local threads = {}
function setup(thread)
    counter = counter + 1
    thread:set("id", counter)
    table.insert(threads, thread)
end
function init(args)
    step, req, code, flows = "authorize", nil, nil, 0
    authorize_path = os.getenv("GATEHOUSE_BENCH_AUTHORIZE_PATH")
    login_form = os.getenv("GATEHOUSE_BENCH_LOGIN_FORM")
    token_form = os.getenv("GATEHOUSE_BENCH_TOKEN_FORM")
    form_headers = {["Content-Type"] = "application/x-www-form-urlencoded"}
end
function request()
    if step == "login" then
        -- The pending request is bound to the gh_login cookie /authorize set.
        local headers = {["Content-Type"] = "application/x-www-form-urlencoded", ["Cookie"] = cookie}
        return wrk.format("POST", "/login", headers, "req=" .. req .. login_form)
    elseif step == "token" then
        return wrk.format("POST", "/token", form_headers, "code=" .. code .. token_form)
    end
    return wrk.format("GET", authorize_path)
end
function response(status, headers, body)
    local location = headers["Location"] or headers["location"] or ""
    if step == "authorize" and status == 303 then
        req = location:match("[?&]req=([^&]+)")
        cookie = (headers["Set-Cookie"] or headers["set-cookie"] or ""):match("(gh_login=[^;]+)")
        step = (req and cookie) and "login" or "authorize"
    elseif step == "login" and status == 303 then
        code = location:match("[?&]code=([^&]+)")
        step = code and "token" or "authorize"
    else
        if step == "token" and status == 200 then
            flows = flows + 1
        end
        step = "authorize"
    end
end
-- Called by report.lua's done(): completed sign-ins, summed over threads.
function extra_report()
    local total = 0
    for _, thread in ipairs(threads) do total = total + (thread:get("flows") or 0) end
    io.write(string.format('FLOWS_JSON {"flows":%d}\n', total))
end
