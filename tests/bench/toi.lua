-- wrk script: POST /v1/toi with two circles closing head-on (they touch at t = 1).
-- Usage (daemon running, e.g. `make run`):
--   wrk -t2 -c64 -d30s --latency -s tests/bench/toi.lua http://127.0.0.1:8080
-- (from the repository root). At the end it prints one line per HTTP
-- status seen ("status 200: N"); wrk's own "Socket errors" line reports
-- transport failures.
wrk.method = "POST"
wrk.path = "/v1/toi"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"a": {"radius": 0.5, "position": [0, 0], "velocity": [1, 0]},'
        .. ' "b": {"radius": 0.5, "position": [3, 0], "velocity": [-1, 0]}}'

dofile("tests/bench/status_counts.lua")
