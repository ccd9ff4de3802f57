# The whole test suite: vet, formatting, and every test with the race detector.
GO ?= go
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: test vet fmt-check build fuzz-smoke

test: vet fmt-check
	$(GO) test -race -count=1 -timeout 20m ./...
	# Allocation budgets and the WAF corpus floors, which the race detector would distort, and the
	# 0-RTT test, whose quic-go client has a data race of its own (the pipeline budget and the 0-RTT
	# test are end-to-end tests, in ./e2e), the binary upgrade under load and the OCSP refresh
	# schedule, which are timing-bound.
	$(GO) test -count=1 -run 'AllocBudget|CorpusFloors|CorpusPlacements|TestHTTP3EarlyData|TestOpsUpgradeUnderLoad|TestOCSPStapled|TestOCSPResponderDown|TestOCSPRevoked' . ./e2e ./waf ./tls

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

build:
	$(GO) build -o bin/edge ./cmd/edge

# Side-by-side benchmarks against HAProxy, nginx and Caddy (installs missing peers from apt).
.PHONY: bench bench-full fuzz
bench:
	$(MAKE) -C bench bench

bench-full:
	$(MAKE) -C bench bench-full

# Runs every fuzz target listed in fuzz/targets.txt for FUZZTIME each (default 30s).
FUZZTIME ?= 30s
fuzz:
	./fuzz/run.sh $(FUZZTIME)
