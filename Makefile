# lockchaos: the two commands a newcomer needs are `make chaos` and `make test`.
GO           ?= go
TEST_TIMEOUT ?= 9m
BENCHTIME    ?= 3s

.PHONY: all test lint vet bench ensure-redis

all: test

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

## bench: lock cycles per second, direct vs through the proxies
bench: ensure-redis
	$(GO) test -run '^$$' -bench BenchmarkLockCycle -benchtime $(BENCHTIME) ./lockimpl/
