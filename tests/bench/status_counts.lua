-- wrk script: counts responses by HTTP status over all threads and prints
-- "status <code>: <n>" lines at the end, so designed 503s (queue full) can
-- be told from real errors. Used alone for plain GETs (the nginx ceiling
-- in load.sh) and loaded by toi.lua. Run wrk from the repository root.
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    counts = {}
end

function response(status, headers, body)
    counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
    local total = {}
    for _, t in ipairs(threads) do
        for status, n in pairs(t:get("counts")) do
            total[status] = (total[status] or 0) + n
        end
    end
    for status, n in pairs(total) do
        io.write(string.format("status %d: %d\n", status, n))
    end
end
