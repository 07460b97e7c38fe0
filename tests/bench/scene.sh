# scene.sh - sourced by the benchmark scripts: `scene N DIM > file` writes the request
# body of a /v1/scenes/predict scene of N moving spheres in DIM (2 or 3) dimensions, the
# scenes of bench_scenes (uniform density, 10% covered, radius 0.5, speed up to 1, horizon
# 1), every number in full (17 digits), by awk with a fixed seed.
scene() {
    awk -v n="$1" -v dim="$2" 'BEGIN {
        srand(20261123 + n + dim); pi = 3.14159265358979323846; r = 0.5
        per = dim == 2 ? pi * r * r / 0.1 : 4 / 3 * pi * r * r * r / 0.1
        side = dim == 2 ? sqrt(n * per) : exp(log(n * per) / 3)
        printf "{\"horizon\": 1, \"broadphase\": \"auto\", \"bodies\": ["
        for (i = 0; i < n; i++) {
            x = rand() * side; y = rand() * side; z = rand() * side
            u = 2 * rand() - 1; v = 2 * rand() - 1; w = 2 * rand() - 1
            if (dim == 2)
                printf "%s{\"radius\":0.5,\"position\":[%.17g,%.17g],\"velocity\":[%.17g,%.17g]}", \
                    (i ? "," : ""), x, y, u, v
            else
                printf "%s{\"radius\":0.5,\"position\":[%.17g,%.17g,%.17g],\"velocity\":[%.17g,%.17g,%.17g]}", \
                    (i ? "," : ""), x, y, z, u, v, w
        }
        printf "]}"
    }'
}

