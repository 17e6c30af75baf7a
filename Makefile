# lockchaos: the two commands a newcomer needs are `make chaos` and `make test`.
GO           ?= go
TEST_TIMEOUT ?= 9m
BENCHTIME    ?= 3s

FUZZTIME     ?= 60s

CHAOS_OUT    ?= out/chaos
CHAOS_FLAGS  ?=

.PHONY: all chaos test lint vet bench bench-locks bench-checker fuzz build ensure-redis redis-image

all: test

## chaos: the scenario matrix on real Redis; exit 0 only if every cell met its expectation
chaos: ensure-redis build
	bin/lockchaos run --out $(CHAOS_OUT) $(CHAOS_FLAGS)

ensure-redis:
	@.ci/ensure-redis

## test: vet, then every test with the race detector (real redis-server processes)
test: ensure-redis vet
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...

## vet: go vet on every package
vet:
	$(GO) vet ./...

## lint: gofmt check and go vet
lint: vet
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

## redis-image: a Redis image built from this machine's redis-server (docker import, no registry)
redis-image: ensure-redis
	faults/docker/build-redis-image.sh

## build: the lockchaos binary in bin/
build:
	$(GO) build -ldflags "-X main.version=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o bin/lockchaos ./cmd/lockchaos

## bench: every benchmark below
bench: bench-locks bench-checker

## bench-locks: lock cycles per second, direct vs through the proxies
bench-locks: ensure-redis
	$(GO) test -run '^$$' -bench BenchmarkLockCycle -benchtime $(BENCHTIME) ./lockimpl/

## bench-checker: checking generated 10k/100k/1M-event histories (time, peak heap)
bench-checker:
	$(GO) test -run '^$$' -bench 'BenchmarkCheck' -benchtime 1x ./checker/

## fuzz: the checker agreement fuzzer (porcupine vs brute force vs interval sweep)
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzCheckersAgree -fuzztime $(FUZZTIME) ./checker/
