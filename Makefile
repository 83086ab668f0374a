# The commands people run. `make demo` and `make test` are the README's two.
SHELL := /bin/bash
GO ?= go
BIN := bin/percause
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The collector makes the binary large and its cold build slow (about 2.5
# minutes on 2 cores); every test package shares this one build via PERCAUSE_BIN.
TEST_TIMEOUT ?= 25m

.PHONY: all build demo test test-short lint fmt vet staticcheck bench bench-pipeline load compare fleet simulate simulate-holes dashboards environment semconv fuzz clean

all: lint test

build:
	$(GO) build -o $(BIN) ./cmd/percause

# The main job: every cause's scenario through the real pipeline, on the
# embedded default config (loopback only, no Docker).
demo: build
	./$(BIN) demo

# Every test, with the real collector binary, the real Prometheus and promtool.
test: build
	PERCAUSE_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# Unit tests only: skips the end-to-end tests that start processes.
test-short:
	$(GO) test -short -count=1 ./...

lint: fmt vet staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./instr/... ./exporters/... ./processors/... ./components/...

# The verdict processor's CPU against the same pipeline passing spans
# through (target: every run within 1.2), then two pass-throughs against
# each other (the benchmark's own spread). Each run prints its cpu-ratio and
# cpu-ratio-se, its standard error; each run measures at least 1,000
# rounds (docs/performance.md, §0310 and §0311). About two minutes.
bench-pipeline:
	$(GO) test -run '^$$' -bench '^BenchmarkCollectorPipeline(PassAgainstPass)?$$' -count 5 ./processors/verdictprocessor/

# A fleet into the embedded default: 100,000 turns from 20,000 installations,
# each relaunching every 2 turns; every turn must be counted exactly.
load: build
	./$(BIN) load --installations 20000 --turns 100000 --relaunch-every 2 --concurrency 64

# The embedded default's CPU per span and request latency against a stock
# pass-through (OTLP → batch → debug) and a durable stock peer (OTLP →
# otlphttp with its sending queue in file_storage), the three side by side
# on the same turns, with 2, 8 and 64 senders: a household's phone and
# engine, a few households, a fleet. Each run prints its table and the
# ratios default/passthrough and default/durable; 6 rounds let each of the
# three go first twice. Each collector is warmed up first, unmeasured, to
# its steady state, since the default is cheaper over its first few
# thousand turns while its counters' series fill (docs/performance.md,
# §0246). About 3 minutes on 2 cores; the targets and figures are in
# docs/performance.md.
compare: build
	./$(BIN) load --compare --concurrency 2 --turns 4000 --installations 100 --relaunch-every 2 --rounds 6 --warmup 1000
	./$(BIN) load --compare --concurrency 8 --turns 8000 --installations 100 --relaunch-every 2 --rounds 6 --warmup 4000
	./$(BIN) load --compare --concurrency 64 --turns 12000 --installations 1000 --relaunch-every 2 --rounds 6 --warmup 10000

# The fleet on Kafka (kafka-edge.yaml, kafka-join.yaml, kafka-decide.yaml)
# through the binary on an in-process Kafka: every launch decided whole;
# decide gateways killed, added and stopped, each launch's history
# following its partition; then what it costs against the embedded
# default on the same turns: CPU a span per tier, the time each hop adds
# (p50, p99), the bytes a turn takes on each topic (README, "Beyond one
# collector"; docs/performance.md, "The fleet on Kafka"). About a minute.
fleet: build
	set -o pipefail; PERCAUSE_BIN=$(CURDIR)/$(BIN) PERCAUSE_FLEET_COST=1 $(GO) test -count=1 -run 'TestKafkaFleet' -v ./collector-config/ | grep -E '^(---|ok|FAIL)|kafka_test.go'

# The seeded fault simulation for as long as asked (SIMULATE_FOR, 10 minutes
# by default), from seed SIMULATE_FIRST on; it reports the schedules it ran
# and how many a second. A failure prints its seed and how to replay it
# (docs/simulation.md). `make test` runs 10,000 schedules.
SIMULATE_FOR ?= 10m
SIMULATE_FIRST ?= 1
simulate:
	set -o pipefail; $(GO) test -count=1 -timeout 0 -run 'TestSimulation$$' -v ./internal/simulation -for $(SIMULATE_FOR) -first $(SIMULATE_FIRST) | grep -v '^=== RUN'

# Each hole the simulation was built to find, planted back one at a time
# (internal/simulation/holes/*.patch, into a worktree of HEAD), explored
# from seed 1 within the CI budget: says after how many schedules each was
# found, and fails if one is not.
simulate-holes:
	internal/simulation/holes/replant.sh

# Each fuzz test for a short while (the corpora under testdata/fuzz run in
# every `make test`).
FUZZTIME ?= 20s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "$$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

# Regenerate what is generated and committed.
dashboards: build
	./$(BIN) dashboards

# docs/environment.md, from the one table of PERCAUSE_* variables
# (internal/leaf/envvars).
environment:
	$(GO) test ./internal/leaf/envvars -run TestEnvironmentDoc -update

semconv:
	$(GO) test ./instr/semconv -run TestSemconvDoc -update

clean:
	rm -rf bin
