-- wrk script for tests/bench/soak.sh: cycles through valid and invalid requests on every
-- endpoint (each connection starts at a different place in the cycle), and counts
-- responses by status with status_counts.lua. Run wrk from the repository root.
dofile("tests/bench/status_counts.lua") -- setup, response, done; init is ours

local J = "application/json"
local cases = {
    -- valid
    {"POST", "/v1/toi", J, '{"a":{"radius":0.5,"position":[0,0],"velocity":[1,0]},"b":{"radius":0.5,"position":[3,0],"velocity":[-1,0]}}'},
    {"POST", "/v1/toi", J, '{"a":{"shape":{"type":"box","half_extents":[1,1,1],"rotation":[1,0.2,0,0]},"position":[0,0,0]},"b":{"shape":{"type":"capsule","a":[0,-1,0],"b":[0,1,0],"radius":0.3},"position":[5,0.5,0],"velocity":[-1,0,0],"acceleration":[0,-1,0]}}'},
    {"POST", "/v1/overlap", J, '{"a":{"shape":{"type":"polygon","vertices":[[0,0],[2,0],[1,2]]},"position":[0,0]},"b":{"radius":1,"position":[1,2.5]}}'},
    {"POST", "/v1/paths/intersect", J, '{"p":[[0,0],[2,2]],"q":[[0,2],[2,0]],"kind":"segment"}'},
    {"POST", "/v1/respond", J, '{"a":{"radius":1,"position":[0,0],"velocity":[1,0],"restitution":0.5},"b":{"radius":1,"position":[2,0],"velocity":[-1,0]}}'},
    {"POST", "/v1/scenes/predict", J, '{"horizon":5,"bodies":[{"radius":1,"position":[0,0],"velocity":[1,0]},{"radius":1,"position":[5,0]},{"shape":{"type":"box","half_extents":[1,1]},"position":[0,5],"velocity":[0,-1]},{"shape":{"type":"halfspace","normal":[0,1],"offset":-3},"position":[0,0],"static":true}]}'},
    {"POST", "/v1/scenes/simulate", J, '{"horizon":10,"gravity":[0,-9.8],"max_events":200,"bodies":[{"radius":0.5,"position":[0,3],"velocity":[1,0],"restitution":0.8},{"radius":0.5,"position":[2,3]},{"shape":{"type":"halfspace","normal":[0,-1],"offset":0},"position":[0,0],"static":true}]}'},
    {"POST", "/v1/validate", J, '{"body":{"radius":0.05,"position":[0,0]},"to":[10,0],"dt":0.1,"world":[{"shape":{"type":"segment","a":[0,-1],"b":[0,1]},"position":[5,0],"static":true}]}'},
    {"POST", "/v1/batch", J, '{"requests":[{"op":"toi","body":{"a":{"radius":1,"position":[0,0]},"b":{"radius":1,"position":[3,0],"velocity":[-1,0]}}},{"op":"toi","body":{"a":1}}]}'},
    {"GET", "/healthz", nil, nil},
    {"GET", "/metrics", nil, nil},
    -- invalid
    {"POST", "/v1/toi", J, '{"a":{"radius":0.5,"position":[0,0]'},
    {"POST", "/v1/toi", J, '{"a":{"radius":"big","position":[0,0]},"b":{"radius":1,"position":[3,0]}}'},
    {"POST", "/v1/toi", J, '{"a":{"radius":NaN,"position":[0,0]},"b":{"radius":1,"position":[3,0]}}'},
    {"POST", "/v1/toi", J, '{"a":{"radius":1e400,"position":[0,0]},"b":{"radius":1,"position":[3,0]}}'},
    {"POST", "/v1/toi", J, '{"a":{"radius":-1,"position":[0,0]},"b":{"radius":1,"position":[3,0]}}'},
    {"POST", "/v1/toi", J, '{"a":{"radius":1,"position":[0,0]},"b":{"radius":1,"position":[3,0,0]}}'},
    {"POST", "/v1/overlap", J, '{"a":{"shape":{"type":"polygon","vertices":[[0,0],[2,0],[1,1],[2,2],[0,2]]},"position":[0,0]},"b":{"radius":1,"position":[1,2.5]}}'},
    {"POST", "/v1/overlap", J, '{"a":{"shape":{"type":"polyhedron","vertices":[[0,0,0],[1,0,0],[0,1,0],[1,1,0]]},"position":[0,0,0]},"b":{"radius":1,"position":[1,2,3]}}'},
    {"POST", "/v1/scenes/predict", J, '{"horizon":-1,"bodies":[]}'},
    {"POST", "/v1/toi", "text/plain", 'hello'},
    {"GET", "/v1/toi", nil, nil},
    {"POST", "/v1/nope", J, '{}'},
    {"POST", "/v1/toi", J, '{"a":{"radius":1,"radius":2,"position":[0,0]},"b":{"radius":1,"position":[3,0]}}'},
    {"POST", "/v1/toi", J, string.rep("[", 5000)},
    {"POST", "/v1/toi", J, ''},
}

local requests = {}
local next_index = 0

function init(args)
    counts = {}
    for i, c in ipairs(cases) do
        local headers = {}
        if c[3] then headers["Content-Type"] = c[3] end
        requests[i] = wrk.format(c[1], c[2], headers, c[4])
    end
    next_index = math.random(#requests)
end

function request()
    next_index = next_index % #requests + 1
    return requests[next_index]
end

