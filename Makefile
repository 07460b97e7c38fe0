# Makefile - build, run and test impactd (GNU make; Debian 12).
#
#   make                 build the daemon, the libraries and the test binaries
#   make deps            install missing build dependencies (apt; no network when none is missing)
#   make deps-test       the same, plus what the tests need (nginx, clang, chromium, selenium)
#   make run             deps + build, then run build/impactd in the foreground (ARGS="--port 9000")
#   make test            deps + build; unit then integration tests; then the same again under
#                        SANITIZE=address,undefined in build/san; ends with "N passed, M failed"
#   make check           unit + integration tests of the current build (no deps, no sanitizers)
#   make check-unit      unit tests only
#   make check-integration   integration tests only
#   make check-valgrind  the whole suite, test binaries and the daemon under valgrind memcheck
#   make check-tsan      the threaded tests (pool, scene text, integration) with ThreadSanitizer
#   make test-lb         three replicas behind nginx (docker/nginx.conf) sharing a Redis, one killed,
#                        one drained, then Redis killed
#   make docker-check    run docker/Dockerfile's steps in a debootstrapped Debian 12 root
#   make fuzz            every tests/fuzz target for FUZZ_SECONDS (60) with libFuzzer (clang)
#   make bench-build     build the benchmarks; make bench runs them (never part of make test)
#   make bench-load      HTTP load test: impactd vs nginx with wrk (tests/bench/load.sh)
#   make bench-box2d     8-gon time of impact against Box2D's b2TimeOfImpact (installs libbox2d-dev)
#   make bench-world-peers  world rays and sweeps against Embree 3 and Bullet (installs them)
#   make bench-rotating-peers  turning 8-gons and boxes against Box2D, Bullet and FCL (installs them)
#   make bench-world-store  a 1M-triangle world through a shared Redis: cold replica, warm queries
#   make format-check    clang-format dry run over every tracked .c/.h (part of make test); make format fixes
#   make lint-openapi    redocly lint (recommended rules, zero warnings) of api/openapi.yaml; installs
#                        @redocly/cli with npm into build/npm (needs the npm registry; not in make test)
#   make soak            10 minutes of valid and invalid requests with wrk; memory and fds flat
#   make clean           remove build/
#
# Outputs (all under $(BUILD): build/, or build/san/ when SANITIZE is set, build/san-thread/
# for SANITIZE=thread):
#   libimpact.a      core/*.c, compiled with no include paths: core sees libc and libm only
#   libimpactapi.a   api/*.c (-I. and jansson)
#   libimpactserver.a  server/*.c but main() and the CLI (unit tests link the modules they test)
#   impactd          server/*.c (except the CLI's main) + both libraries + libmicrohttpd + zlib
#   impact           the CLI: server/cli*.c + both libraries + jansson, and Assimp (model
#                    files) and libcurl (uploads), which nothing else links
#   tests/unit/test_*, tests/integration/test_*, tests/bench/bench_*  one per source file;
#   other .c files in those directories are helpers linked into every binary of their suite.
# New sources are picked up by wildcards: adding a file needs no change here.

.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

ifeq ($(origin CC),default)
CC := gcc
endif

SANITIZE ?=
BUILD ?= $(if $(SANITIZE),build/san$(if $(filter thread,$(SANITIZE)),-thread),build)

# Everything a fresh Debian machine needs to build and test; add packages here.
DEPS_PACKAGES := libmicrohttpd-dev libjansson-dev zlib1g-dev libcurl4-openssl-dev libcmocka-dev libssl-dev \
                 libhiredis-dev libassimp-dev libgmp-dev pkg-config gcc make
# What the tests need besides: nginx is the load balancer of tests/integration/test_lb.c,
# clang builds the fuzz targets (libFuzzer) of the smoke run, clang-format checks the layout,
# redis-server is the shared world store tests/integration/test_store.c starts and kills;
# chromium, chromium-driver and python3-selenium run the viewer page (GET /viewer) in a
# headless browser (tests/integration/test_viewer.c and .py).
TEST_PACKAGES := nginx clang clang-format redis-server chromium chromium-driver python3-selenium

CFLAGS := -std=c17 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Werror -O2 -g -D_POSIX_C_SOURCE=200809L
LDFLAGS :=
ifneq ($(SANITIZE),)
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
export UBSAN_OPTIONS ?= print_stacktrace=1
endif
DEPFLAGS := -MMD -MP

# pkg-config may be missing before `make deps` has run; fall back to plain -l flags
# (make test and make run re-enter make after deps, so they always see pkg-config).
pkg_cflags = $(shell pkg-config --cflags $(1) 2>/dev/null)
pkg_libs = $(or $(shell pkg-config --libs $(1) 2>/dev/null),$(2))
JANSSON_CFLAGS := $(call pkg_cflags,jansson)
JANSSON_LIBS := $(call pkg_libs,jansson,-ljansson)
MHD_CFLAGS := $(call pkg_cflags,libmicrohttpd)
MHD_LIBS := $(call pkg_libs,libmicrohttpd,-lmicrohttpd)
CURL_CFLAGS := $(call pkg_cflags,libcurl)
CURL_LIBS := $(call pkg_libs,libcurl,-lcurl)
CMOCKA_CFLAGS := $(call pkg_cflags,cmocka)
CMOCKA_LIBS := $(call pkg_libs,cmocka,-lcmocka)
ZLIB_CFLAGS := $(call pkg_cflags,zlib)
ZLIB_LIBS := $(call pkg_libs,zlib,-lz)
CRYPTO_CFLAGS := $(call pkg_cflags,libcrypto)
CRYPTO_LIBS := $(call pkg_libs,libcrypto,-lcrypto)
ASSIMP_CFLAGS := $(call pkg_cflags,assimp)
ASSIMP_LIBS := $(call pkg_libs,assimp,-lassimp)
# GMP: core's exact path of moving-triangle collision (core/ccd_exact.c); gmp.h is on the
# compiler's default path, so core still builds with no include path.
GMP_LIBS := $(call pkg_libs,gmp,-lgmp)
HIREDIS_CFLAGS := $(call pkg_cflags,hiredis)
HIREDIS_LIBS := $(call pkg_libs,hiredis,-lhiredis)

# ---- sources ---------------------------------------------------------------------------------

# The `impact` CLI lives in server/ (cli.c has its main()); it is not part of the daemon.
CLI_SRCS := $(wildcard server/cli*.c)

CORE_SRCS := $(wildcard core/*.c)
API_SRCS := $(wildcard api/*.c)
SERVER_SRCS := $(filter-out $(CLI_SRCS),$(wildcard server/*.c))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_HELPERS := $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
INTEG_SRCS := $(wildcard tests/integration/test_*.c)
INTEG_HELPERS := $(filter-out $(INTEG_SRCS),$(wildcard tests/integration/*.c))
BENCH_SRCS := $(wildcard tests/bench/bench_*.c)
BENCH_HELPERS := $(filter-out $(BENCH_SRCS),$(wildcard tests/bench/*.c))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
CORE_OBJS := $(call obj,$(CORE_SRCS))
API_OBJS := $(call obj,$(API_SRCS))
SERVER_OBJS := $(call obj,$(SERVER_SRCS))
UNIT_HELPER_OBJS := $(call obj,$(UNIT_HELPERS))
INTEG_HELPER_OBJS := $(call obj,$(INTEG_HELPERS))
BENCH_HELPER_OBJS := $(call obj,$(BENCH_HELPERS))
ALL_OBJS := $(call obj,$(CORE_SRCS) $(API_SRCS) $(SERVER_SRCS) $(UNIT_SRCS) $(UNIT_HELPERS) \
                       $(INTEG_SRCS) $(INTEG_HELPERS) $(BENCH_SRCS) $(BENCH_HELPERS))

LIBIMPACT := $(BUILD)/libimpact.a
LIBIMPACTAPI := $(BUILD)/libimpactapi.a
# The daemon's modules without main(), so unit tests can link the ones they test (an
# archive contributes only the members a test references: test_pool pulls pool.o alone).
LIBIMPACTSERVER := $(BUILD)/libimpactserver.a
SERVER_LIB_OBJS := $(filter-out $(BUILD)/obj/server/main.o,$(SERVER_OBJS))
IMPACTD := $(BUILD)/impactd
IMPACT := $(BUILD)/impact
CLI_OBJS := $(call obj,$(CLI_SRCS))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
INTEG_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/integration/%,$(INTEG_SRCS))
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/tests/bench/%,$(BENCH_SRCS))

# ---- compile ---------------------------------------------------------------------------------

# core: no -I and no pkg-config flags, so an include of anything but libc/libm fails here.
$(BUILD)/obj/core/%.o: core/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/api/%.o: api/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -pthread -I. $(JANSSON_CFLAGS) $(CRYPTO_CFLAGS) -c $< -o $@

# The OpenAPI document is assembled into the api library (.incbin), which the
# compiler's dependency files do not see.
$(BUILD)/obj/api/openapi.o: api/openapi.yaml
# The same for the viewer page (GET /viewer).
$(BUILD)/obj/api/viewer.o: viewer/index.html

$(BUILD)/obj/server/%.o: server/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -pthread -I. $(MHD_CFLAGS) $(JANSSON_CFLAGS) $(ZLIB_CFLAGS) \
	    $(HIREDIS_CFLAGS) -c $< -o $@

# The CLI's objects also see Assimp and libcurl (a static pattern rule: it wins over the one above).
$(CLI_OBJS): $(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -pthread -I. $(JANSSON_CFLAGS) $(ASSIMP_CFLAGS) $(CURL_CFLAGS) \
	    -c $< -o $@

$(BUILD)/obj/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -pthread -I. $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS) $(ZLIB_CFLAGS) \
	    -c $< -o $@

$(BUILD)/obj/tests/integration/%.o: tests/integration/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -pthread -I. $(CMOCKA_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS) \
	    $(ZLIB_CFLAGS) -c $< -o $@

$(BUILD)/obj/tests/bench/%.o: tests/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -pthread -I. $(JANSSON_CFLAGS) -c $< -o $@

# ---- link ------------------------------------------------------------------------------------

# rm first: `ar r` into an existing archive would keep members of deleted sources.
$(LIBIMPACT): $(CORE_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBIMPACTAPI): $(API_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

$(LIBIMPACTSERVER): $(SERVER_LIB_OBJS)
	@mkdir -p $(@D)
	@rm -f $@
	$(AR) rcs $@ $^

$(IMPACTD): $(SERVER_OBJS) $(LIBIMPACTAPI) $(LIBIMPACT)
	$(CC) $(LDFLAGS) -pthread -o $@ $(SERVER_OBJS) $(LIBIMPACTAPI) $(LIBIMPACT) \
	    $(MHD_LIBS) $(JANSSON_LIBS) $(HIREDIS_LIBS) $(CRYPTO_LIBS) $(ZLIB_LIBS) -lpthread \
	    $(GMP_LIBS) -lm

$(IMPACT): $(CLI_OBJS) $(LIBIMPACTAPI) $(LIBIMPACT)
	$(CC) $(LDFLAGS) -pthread -o $@ $(CLI_OBJS) $(LIBIMPACTAPI) $(LIBIMPACT) $(ASSIMP_LIBS) \
	    $(CURL_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS) $(GMP_LIBS) -lm

# Static pattern rules (not plain pattern rules): their objects count as explicitly named, so
# make never treats them as intermediate files to skip or delete.
$(UNIT_BINS): $(BUILD)/tests/unit/%: $(BUILD)/obj/tests/unit/%.o $(UNIT_HELPER_OBJS) \
                                     $(LIBIMPACTSERVER) $(LIBIMPACTAPI) $(LIBIMPACT)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -pthread -o $@ $< $(UNIT_HELPER_OBJS) $(LIBIMPACTSERVER) $(LIBIMPACTAPI) \
	    $(LIBIMPACT) $(CMOCKA_LIBS) $(JANSSON_LIBS) $(HIREDIS_LIBS) $(CRYPTO_LIBS) $(ZLIB_LIBS) \
	    -lpthread $(GMP_LIBS) -lm

# test_no_alloc counts core's allocations: every malloc, calloc and realloc the static
# libraries call goes through its wrappers.
$(BUILD)/tests/unit/test_no_alloc: LDFLAGS += -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

$(INTEG_BINS): $(BUILD)/tests/integration/%: $(BUILD)/obj/tests/integration/%.o \
                                            $(INTEG_HELPER_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -pthread -o $@ $< $(INTEG_HELPER_OBJS) \
	    $(CMOCKA_LIBS) $(CURL_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS) $(ZLIB_LIBS) -lpthread -lm

$(BENCH_BINS): $(BUILD)/tests/bench/%: $(BUILD)/obj/tests/bench/%.o $(BENCH_HELPER_OBJS) \
                                      $(LIBIMPACTSERVER) $(LIBIMPACTAPI) $(LIBIMPACT)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -pthread -o $@ $< $(BENCH_HELPER_OBJS) $(LIBIMPACTSERVER) $(LIBIMPACTAPI) \
	    $(LIBIMPACT) $(JANSSON_LIBS) $(HIREDIS_LIBS) $(CRYPTO_LIBS) $(ZLIB_LIBS) -lpthread \
	    $(GMP_LIBS) -lm

-include $(ALL_OBJS:.o=.d) $(CLI_OBJS:.o=.d)

# ---- targets ---------------------------------------------------------------------------------

.PHONY: all deps deps-test run test format format-check test-lb docker-check fuzz fuzz-build fuzz-libs fuzz-smoke \
        check check-unit check-integration check-valgrind check-tsan check-tsan-run \
        bench-build bench bench-box2d bench-world-peers bench-rotating-peers bench-world-store bench-load soak lint-openapi clean

all: $(IMPACTD) $(IMPACT) $(LIBIMPACT) $(LIBIMPACTAPI) $(UNIT_BINS) $(INTEG_BINS)

# $(call install_missing,packages): apt-get install whatever of them is not installed
# (sudo when not root); touches the network only when something is missing.
define install_missing
	@missing=""; \
	for p in $(1); do \
	    dpkg -s "$$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all installed"; exit 0; fi; \
	echo "deps: installing$$missing"; \
	sudo=""; \
	if [ "$$(id -u)" -ne 0 ]; then \
	    if command -v sudo >/dev/null 2>&1; then sudo=sudo; \
	    else echo "deps: not root and no sudo; install:$$missing" >&2; exit 1; fi; \
	fi; \
	$$sudo apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing
endef

deps:
	$(call install_missing,$(DEPS_PACKAGES))

deps-test:
	$(call install_missing,$(DEPS_PACKAGES) $(TEST_PACKAGES))

run: deps
	@$(MAKE) --no-print-directory $(IMPACTD)
	exec $(IMPACTD) $(ARGS)

# Test running. Each binary is run from the repository root with IMPACTD_BIN set to the
# daemon of this build; the first failure stops the run. Results go to $(RESULTS) as
# "pass|fail <binary>" lines; the summary line counts them.
TEST_TIMEOUT ?= 300
# What runs each test binary (check-valgrind: valgrind), and the daemon and CLI the
# integration tests start (check-valgrind: the wrappers in tests/valgrind/).
TEST_WRAPPER ?=
DAEMON_UNDER_TEST ?= $(abspath $(IMPACTD))
CLI_UNDER_TEST ?= $(abspath $(IMPACT))
RESULTS ?= $(BUILD)/test-results
TEST_RESULTS := build/test-results
summary = p=$$(cat $(1) 2>/dev/null | grep -c '^pass'); f=$$(cat $(1) 2>/dev/null | grep -c '^fail')

# $(call run_tests,binaries)  KEEP_RESULTS=1 appends to $(RESULTS) and prints no summary.
define run_tests
	@mkdir -p $(dir $(RESULTS)); \
	[ -n "$(KEEP_RESULTS)" ] || rm -f $(RESULTS); \
	status=0; \
	for t in $(1); do \
	    echo "==> $$t"; \
	    if IMPACTD_BIN="$(DAEMON_UNDER_TEST)" IMPACT_BIN="$(CLI_UNDER_TEST)" \
	        timeout $(TEST_TIMEOUT) $(TEST_WRAPPER) $$t; then \
	        echo "pass $$t" >> $(RESULTS); \
	    else \
	        echo "fail $$t" >> $(RESULTS); echo "==> FAILED: $$t" >&2; status=1; break; \
	    fi; \
	done; \
	if [ -z "$(KEEP_RESULTS)" ]; then $(call summary,$(RESULTS)); echo "$$p passed, $$f failed"; fi; \
	exit $$status
endef

check-unit: $(UNIT_BINS)
	$(call run_tests,$(UNIT_BINS))

check-integration: $(IMPACTD) $(IMPACT) $(INTEG_BINS)
	$(call run_tests,$(INTEG_BINS))

check: all
	$(call run_tests,$(UNIT_BINS) $(INTEG_BINS))

# A build that fails before any test ran still counts as one failure in the summary.
test: deps-test
	@rm -f $(TEST_RESULTS); mkdir -p $(dir $(TEST_RESULTS)); status=0; \
	if $(MAKE) --no-print-directory format-check; then echo "pass format-check" >> $(TEST_RESULTS); \
	else echo "fail format-check" >> $(TEST_RESULTS); status=1; fi; \
	if [ $$status -eq 0 ]; then \
	    $(MAKE) --no-print-directory check KEEP_RESULTS=1 RESULTS=$(TEST_RESULTS) || status=1; \
	fi; \
	if [ $$status -eq 0 ]; then \
	    echo "==> again with SANITIZE=address,undefined"; \
	    $(MAKE) --no-print-directory check SANITIZE=address,undefined KEEP_RESULTS=1 \
	        RESULTS=$(TEST_RESULTS) || status=1; \
	fi; \
	if [ $$status -eq 0 ]; then \
	    echo "==> fuzz smoke run, $(FUZZ_SMOKE_RUNS) inputs per target from seed $(FUZZ_SMOKE_SEED)"; \
	    $(MAKE) --no-print-directory fuzz-smoke RESULTS=$(abspath $(TEST_RESULTS)) || status=1; \
	fi; \
	$(call summary,$(TEST_RESULTS)); \
	if [ $$status -ne 0 ] && [ $$f -eq 0 ]; then f=1; fi; \
	echo "$$p passed, $$f failed"; \
	exit $$status

# Layout: every tracked C source and header as .clang-format says (a dry run, warnings as
# errors); `make format` rewrites them in place.
FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format-check:
	@clang-format --dry-run --Werror $(FORMAT_SRCS) && echo "format-check: $(words $(FORMAT_SRCS)) files clean"

format:
	clang-format -i $(FORMAT_SRCS)

# OpenAPI lint: api/openapi.yaml against Redocly's `recommended` ruleset; an error or a warning
# fails. @redocly/cli, pinned, is installed with npm into build/npm (ignored by git, like all of
# build/) on first use; it needs Node.js >= 20.19 and npm, and the npm registry for that first
# install, so it is not part of make test. REDOCLY_SUPPRESS_NOTIFICATIONS silences its update
# notice and REDOCLY_TELEMETRY=off its usage reports; on Node.js 20 it still prints a boxed
# notice that later releases need Node.js 22, which is not a finding about the document.
REDOCLY_VERSION := 2.77.0
REDOCLY_DIR := build/npm
REDOCLY := $(REDOCLY_DIR)/node_modules/.bin/redocly
REDOCLY_STAMP := $(REDOCLY_DIR)/redocly-$(REDOCLY_VERSION).stamp
REDOCLY_ENV := REDOCLY_SUPPRESS_NOTIFICATIONS=true REDOCLY_TELEMETRY=off

$(REDOCLY_STAMP):
	@command -v npm >/dev/null 2>&1 || { echo "lint-openapi: needs Node.js (>= 20.19) and npm" >&2; exit 1; }
	@mkdir -p $(REDOCLY_DIR)
	npm install --prefix $(REDOCLY_DIR) --no-save --no-audit --no-fund --loglevel=error \
	    @redocly/cli@$(REDOCLY_VERSION)
	@touch $@

lint-openapi: $(REDOCLY_STAMP)
	@out=$$($(REDOCLY_ENV) $(REDOCLY) lint --extends recommended --format stylish api/openapi.yaml 2>&1); \
	status=$$?; echo "$$out"; \
	if echo "$$out" | grep -Eq '^ +[0-9]+:[0-9]+ +warning '; then \
	    echo "lint-openapi: warnings count as failures" >&2; status=1; fi; \
	exit $$status

# Memcheck: the whole suite from a plain build in build/vg, every test binary under valgrind,
# and the daemon and CLI the integration tests start under it too (tests/valgrind/). Any
# invalid access, use of uninitialised memory or definite/indirect leak makes that program
# exit 99, which fails its test (a daemon's exit status is checked when the test stops it).
# Not part of make test: it takes about VALGRIND_MINUTES here.
VALGRIND_FLAGS := -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
                  --errors-for-leak-kinds=definite,indirect
check-valgrind: deps-test
	$(call install_missing,valgrind)
	@$(MAKE) --no-print-directory BUILD=build/vg all
	IMP_TEST_UNDER_VALGRIND=1 VALGRIND_FLAGS="$(VALGRIND_FLAGS)" VALGRIND_BUILD="$(abspath build/vg)" \
	    $(MAKE) --no-print-directory BUILD=build/vg check TEST_TIMEOUT=3600 \
	    TEST_WRAPPER="valgrind $(VALGRIND_FLAGS)" \
	    DAEMON_UNDER_TEST="$(abspath tests/valgrind/impactd)" \
	    CLI_UNDER_TEST="$(abspath tests/valgrind/impact)"

# ThreadSanitizer: the tests that run threads (the worker pool's, the scene text path's,
# which decodes long bodies arrays in chunks on a pool, the world store's queries while other
# threads upload and delete (test_worlds), and every integration test, whose
# daemons are the TSan build) in build/san-thread; a data race or lock-order inversion stops
# the program with exit 66 (halt_on_error), which fails its test.
TSAN_TESTS = $(BUILD)/tests/unit/test_pool $(BUILD)/tests/unit/test_scenetext \
             $(BUILD)/tests/unit/test_scene $(BUILD)/tests/unit/test_worlds $(INTEG_BINS)
check-tsan: deps-test
	@$(MAKE) --no-print-directory SANITIZE=thread check-tsan-run

check-tsan-run: export TSAN_OPTIONS = halt_on_error=1 exitcode=66 second_deadlock_stack=1
check-tsan-run: $(IMPACTD) $(IMPACT) $(TSAN_TESTS)
	$(call run_tests,$(TSAN_TESTS))

# Three replicas behind nginx running docker/nginx.conf sharing a redis-server for worlds, one
# killed and one drained under load, then Redis killed (also part of make check / make test).
test-lb: deps-test $(IMPACTD) $(BUILD)/tests/integration/test_lb
	$(call run_tests,$(BUILD)/tests/integration/test_lb)

# docker/Dockerfile's steps in a debootstrapped Debian 12 root (no Docker engine needed;
# root, network to the Debian mirror). Not part of make test.
docker-check:
	sh docker/check.sh

# ---- fuzzing (libFuzzer, clang) -------------------------------------------------------------
# core and api built with clang and -fsanitize=fuzzer-no-link,address,undefined into
# build/fuzz/, each tests/fuzz/fuzz_*.c linked against them with -fsanitize=fuzzer. make fuzz
# runs every target FUZZ_SECONDS (60) on a corpus in build/fuzz/corpus/<target> seeded from
# tests/fuzz/corpus/<target>; findings (crash-*, timeout-*, oom-*) stay in build/fuzz/.
# fuzz-smoke is the short run make test does. The same sources build for AFL++ through its
# libFuzzer driver (afl-clang-fast -fsanitize=fuzzer).
FUZZ_BUILD := build/fuzz
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 60
# The smoke run is a fixed number of inputs from a fixed seed, so make test gives the same
# verdict on every machine and every run (a time limit would make it depend on speed);
# about 10 s for fuzz_api, fuzz_roots and fuzz_toi here, 20 s more for fuzz_ccd (whose exact
# path is slower). make fuzz explores with fresh seeds instead.
FUZZ_SMOKE_SEED ?= 1
FUZZ_SMOKE_RUNS ?= 60000
FUZZ_LIBS := $(FUZZ_BUILD)/libimpactapi.a $(FUZZ_BUILD)/libimpact.a

fuzz-libs: deps-test
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang \
	    SANITIZE=fuzzer-no-link,address,undefined $(FUZZ_LIBS)

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c fuzz-libs
	clang $(filter-out -Werror,$(CFLAGS)) -Werror -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -I. $(JANSSON_CFLAGS) $< $(FUZZ_LIBS) $(JANSSON_LIBS) $(CRYPTO_LIBS) $(GMP_LIBS) -lm -o $@

fuzz-build: $(FUZZ_BINS)

# $(call run_fuzz,limit flags): every target with those libFuzzer flags; "pass|fail fuzz_X"
# lines to $(RESULTS) when RESULTS is set, and the executions each made.
define run_fuzz
	@status=0; for f in $(FUZZ_BINS); do \
	    name=$$(basename $$f); corpus=$(FUZZ_BUILD)/corpus/$${name#fuzz_}; mkdir -p $$corpus; \
	    seeds=tests/fuzz/corpus/$${name#fuzz_}; [ -d $$seeds ] && cp -n $$seeds/* $$corpus/ 2>/dev/null; \
	    echo "==> $$name ($(1))"; \
	    if (cd $(FUZZ_BUILD) && ./$$name $(1) -timeout=10 -rss_limit_mb=2048 \
	            -print_final_stats=1 corpus/$${name#fuzz_} > $$name.log 2>&1); then \
	        grep -h 'stat::number_of_executed_units' $(FUZZ_BUILD)/$$name.log; \
	        [ -z "$(RESULTS)" ] || echo "pass $$name" >> $(RESULTS); \
	    else \
	        tail -n 40 $(FUZZ_BUILD)/$$name.log; echo "==> FAILED: $$name (see $(FUZZ_BUILD))" >&2; \
	        [ -z "$(RESULTS)" ] || echo "fail $$name" >> $(RESULTS); status=1; \
	    fi; \
	done; exit $$status
endef

fuzz: fuzz-build
	$(call run_fuzz,-max_total_time=$(FUZZ_SECONDS))

fuzz-smoke: fuzz-build
	$(call run_fuzz,-seed=$(FUZZ_SMOKE_SEED) -runs=$(FUZZ_SMOKE_RUNS))

bench-build: $(BENCH_BINS)

bench: bench-build
	@for b in $(BENCH_BINS); do echo "==> $$b"; $$b || exit 1; done

# impactd's 8-gon TOI against Box2D 2.4.1's b2TimeOfImpact on the same pairs, translation only
# (tests/bench/box2d/: outside the bench_*.c wildcard, C++ glue). libbox2d-dev and g++ are
# benchmark-only dependencies, installed here when missing; make test never needs them.
# BOX2D_ARGS="1000" sets the number of pairs (default 4096).
BOX2D_PACKAGES := libbox2d-dev g++
BOX2D_BENCH := $(BUILD)/tests/bench/box2d/bench_box2d
BOX2D_OBJS := $(BUILD)/obj/tests/bench/box2d/bench_box2d.o $(BUILD)/obj/tests/bench/box2d/box2d_toi.o
BOX2D_CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -O2 -g $(SAN_FLAGS) $(call pkg_cflags,box2d)
BOX2D_LIBS := $(call pkg_libs,box2d,-lbox2d)

$(BUILD)/obj/tests/bench/box2d/%.o: tests/bench/box2d/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(BOX2D_CXXFLAGS) $(DEPFLAGS) -c $< -o $@

$(BOX2D_BENCH): $(BOX2D_OBJS) $(LIBIMPACT)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(BOX2D_OBJS) $(LIBIMPACT) $(BOX2D_LIBS) -lstdc++ $(GMP_LIBS) -lm

# The build runs in a second make, which sees Box2D's pkg-config file once it is installed.
bench-box2d:
	$(call install_missing,$(BOX2D_PACKAGES))
	@$(MAKE) --no-print-directory $(BOX2D_BENCH)
	$(BOX2D_BENCH) $(BOX2D_ARGS)

-include $(BOX2D_OBJS:.o=.d)

# impactd's static world against Embree 3 (rtcIntersect1) and Bullet (btBvhTriangleMeshShape
# rayTest and convexSweepTest) on the same triangles, rays and sweeps (tests/bench/world/;
# benchmark-only dependencies, installed here when missing; make test never needs them).
# WORLD_PEERS_ARGS="1e6 2e5 2e4" sets triangles, rays and sweeps.
PEERS_PACKAGES := libembree-dev libbullet-dev g++
PEERS_BENCH := $(BUILD)/tests/bench/world/bench_world_peers
PEERS_OBJS := $(BUILD)/obj/tests/bench/world/bench_world_peers.o \
              $(BUILD)/obj/tests/bench/world/peers.o
PEERS_CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -O2 -g $(SAN_FLAGS) $(call pkg_cflags,bullet)
PEERS_LIBS := -lembree3 $(call pkg_libs,bullet,-lBulletCollision -lLinearMath)

$(BUILD)/obj/tests/bench/world/%.o: tests/bench/world/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(PEERS_CXXFLAGS) $(DEPFLAGS) -c $< -o $@

$(PEERS_BENCH): $(PEERS_OBJS) $(LIBIMPACT)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(PEERS_OBJS) $(LIBIMPACT) $(PEERS_LIBS) -lstdc++ $(GMP_LIBS) -lm

bench-world-peers:
	$(call install_missing,$(PEERS_PACKAGES))
	@$(MAKE) --no-print-directory $(PEERS_BENCH)
	$(PEERS_BENCH) $(WORLD_PEERS_ARGS)

-include $(PEERS_OBJS:.o=.d)

# impactd's time of impact of turning bodies against Box2D 2.4.1 (rotating b2Sweep, 8-gons),
# Bullet (btContinuousConvexCollision) and FCL (continuousCollide; boxes) on the same pairs: rates,
# and the pairs each calls apart although they touch (tests/bench/rotating/; Box2D's glue is
# tests/bench/box2d/box2d_toi.cpp). Benchmark-only dependencies, installed here when missing;
# make test never needs them. ROT_PEERS_ARGS="512" sets the pairs per kind (default 2048).
ROT_PEERS_PACKAGES := libbox2d-dev libbullet-dev libfcl-dev g++
ROT_PEERS_BENCH := $(BUILD)/tests/bench/rotating/bench_rotating_peers
ROT_PEERS_OBJS := $(BUILD)/obj/tests/bench/rotating/bench_rotating_peers.o \
                  $(BUILD)/obj/tests/bench/rotating/peers3d.o \
                  $(BUILD)/obj/tests/bench/box2d/box2d_toi.o
# FCL's pkg-config file asks for -std=c++11 and Eigen's headers by -I: keep C++17, and let
# Eigen's warnings be a system header's
ROT_PEERS_CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -O2 -g $(SAN_FLAGS) $(call pkg_cflags,bullet) \
                      $(patsubst -I%,-isystem %,$(filter-out -std=%,$(call pkg_cflags,fcl)))
ROT_PEERS_LIBS := $(BOX2D_LIBS) $(call pkg_libs,bullet,-lBulletCollision -lLinearMath) \
                  $(call pkg_libs,fcl,-lfcl -lccd)

$(BUILD)/obj/tests/bench/rotating/%.o: tests/bench/rotating/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(ROT_PEERS_CXXFLAGS) $(DEPFLAGS) -c $< -o $@

$(ROT_PEERS_BENCH): $(ROT_PEERS_OBJS) $(LIBIMPACT)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(ROT_PEERS_OBJS) $(LIBIMPACT) $(ROT_PEERS_LIBS) -lstdc++ $(GMP_LIBS) -lm

bench-rotating-peers:
	$(call install_missing,$(ROT_PEERS_PACKAGES))
	@$(MAKE) --no-print-directory $(ROT_PEERS_BENCH)
	$(ROT_PEERS_BENCH) $(ROT_PEERS_ARGS)

-include $(ROT_PEERS_OBJS:.o=.d)

# The shared world store: a 1,000,000-triangle world uploaded to one replica, the first query
# on a cold second replica (fetch from Redis + build) and warm queries (tests/bench/world_store.sh;
# needs redis-server: make deps-test). WORLD_STORE_ARGS="200" sets the warm queries.
bench-world-store: $(IMPACTD)
	IMPACTD=$(IMPACTD) sh tests/bench/world_store.sh $(WORLD_STORE_ARGS)

# HTTP load: wrk on /v1/toi against nginx serving a static file, taking turns
# (installs wrk and nginx when missing). LOAD_ARGS="60 64 6" sets the seconds a server,
# the connections and the rounds the servers take turns in.
bench-load: $(IMPACTD)
	IMPACTD=$(IMPACTD) sh tests/bench/load.sh $(LOAD_ARGS)

# Soak: wrk with valid and invalid requests on every endpoint against one daemon for
# SOAK_ARGS="600 32" (seconds, connections); resident memory and fds sampled and checked
# flat, no 5xx but designed 503s, a clean exit (tests/bench/soak.sh; installs wrk).
soak: $(IMPACTD)
	IMPACTD=$(IMPACTD) sh tests/bench/soak.sh $(SOAK_ARGS)

clean:
	rm -rf build
