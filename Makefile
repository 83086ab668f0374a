# The commands people run. `make demo` and `make test` are the README's two.
SHELL := /bin/bash
GO ?= go
BIN := bin/percause
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# The collector makes the binary large and its cold build slow (about 2.5
# minutes on 2 cores); every test package shares this one build via PERCAUSE_BIN.
TEST_TIMEOUT ?= 25m

.PHONY: all build demo test test-short lint fmt vet staticcheck bench dashboards semconv fuzz clean

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
	$(GO) test -run '^$$' -bench . -benchmem ./instr/... ./exporters/... ./processors/...

# Regenerate what is generated and committed.
dashboards: build
	./$(BIN) dashboards

semconv:
	$(GO) test ./instr/semconv -run TestSemconvDoc -update

clean:
	rm -rf bin
