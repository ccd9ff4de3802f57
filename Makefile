# The whole test suite: vet, formatting, and every test with the race detector.
GO ?= go
export PATH := /usr/local/go/bin:$(PATH)

.PHONY: test vet fmt-check build fuzz-smoke

test: vet fmt-check
	$(GO) test -race -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

build:
	$(GO) build -o bin/edge ./cmd/edge
