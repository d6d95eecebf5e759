-- Shared by every wrk run of Scripts/bench: one JSON line with requests/s
-- (successful responses only), p50 and p99 latency in milliseconds, the
-- run's length in seconds; a run's own script may add lines through
-- extra_report().
function done(summary, latency, requests)
    local seconds = summary.duration / 1e6
    local failed = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
    io.write(string.format('WRK_JSON {"requests":%d,"failed":%d,"rps":%.1f,"p50_ms":%.3f,"p99_ms":%.3f,"seconds":%.3f}\n',
        summary.requests, failed, (summary.requests - failed) / seconds,
        latency:percentile(50) / 1000, latency:percentile(99) / 1000, seconds))
    if extra_report then extra_report() end
end
