# lockchaos: the two commands a newcomer needs are `make chaos` and `make test`.
GO           ?= go
TEST_TIMEOUT ?= 9m
BENCHTIME    ?= 3s

FUZZTIME     ?= 60s

CHAOS_OUT    ?= out/chaos
CHAOS_FLAGS  ?=

PERF_OUT     ?= out/perf
CHOOSE_OUT   ?= out/choose
# make chaos's scenarios (the gate, ~35 s); the liveness rows (a holder that
# crashes, restarts or hangs; a node cut off for longer than fault-tolerant's
# bound) run in make chaos-liveness. A bare `lockchaos run` runs them all.
CHAOS_SCENARIOS := baseline,slow-holder,gc-pause,slow-reply,client-partition,failover,node-restart,node-restart-delayed
LIVENESS        := minority-partition,pod-crash,pod-crash-restart,abandoned-lease
# make chaos-postgres's scenarios: every one a PostgreSQL lock has an
# expectation in.
PG_SCENARIOS    := baseline,slow-holder,gc-pause,client-partition,client-partition-long,standby-promotion,node-restart,node-restart-delayed,pod-crash,pod-crash-restart,abandoned-lease
# make chaos-cluster's scenarios: the Redis Cluster rows (scenarios/catalog_cluster.go).
CLUSTER_SCENARIOS := cluster-baseline,cluster-failover,cluster-split,cluster-manual-failover,cluster-manual-failover-force,cluster-manual-failover-takeover,slot-migration
# make chaos-etcd's scenarios: the etcd rows (scenarios/catalog_etcd.go)
# but etcd-member-cut, which under load rarely reaches its moment (docs/etcd.md).
ETCD_SCENARIOS := etcd-baseline,etcd-slow-holder,etcd-gc-pause,etcd-client-partition,etcd-pod-crash,etcd-leader-kill,etcd-leader-isolated
# Three members per cell, mostly waiting on leases and elections: four
# cells at once on two cores (1m26s quiet).
ETCD_FLAGS     ?= --parallel 4
# Cluster cells mostly wait on the cluster's own timing (node timeout,
# elections): four at once keep the gate short on two cores.
CLUSTER_FLAGS     ?= --parallel 4
# The scenarios of scenarios/critiques.yaml.
CRITIQUES    := replies-lost,requests-lost,clock-jump,replica-clock-skew,power-loss-everysec,power-loss-always,sentinel-failover,sentinel-partition
SOAK_RUNS    ?= 40
MARGINS_SEED ?= 2700

SIM_SEED     ?= 1

# The C drivers are built with gcc unless CC is given (make's own default, cc, is not).
ifeq ($(origin CC),default)
CC := gcc
endif

.PHONY: chaos-sim chaos-sim-vs-process
.PHONY: chaos-cluster chaos-cluster-loaded bench-cluster
.PHONY: chaos-liveness chaos-liveness-loaded chaos-postgres chaos-postgres-loaded ensure-postgres margins-postgres
.PHONY: choose choose-quick choose-quick-loaded
.PHONY: chaos-etcd chaos-etcd-loaded ensure-etcd
.PHONY: all chaos chaos-loaded chaos-libs chaos-critiques libs-table margins margins-theory margins-table test lint vet bench bench-locks bench-checker bench-drivers fuzz build ensure-redis redis-image postgres-image perf detection soak

all: test

## chaos: the scenario matrix on real Redis; exit 0 only if every cell met its expectation
# Without redis-server but with a Docker engine (Docker Desktop, say), the
# run picks the docker backend by itself.
chaos: build
	@.ci/ensure-redis 2>/dev/null || docker info >/dev/null 2>&1 || .ci/ensure-redis
	bin/lockchaos run --service redis --scenario $(CHAOS_SCENARIOS) --out $(CHAOS_OUT) $(CHAOS_FLAGS)

## chaos-loaded: the same gate while CPU burners (2 per core) compete, as on a shared CI runner
chaos-loaded: build
	@.ci/ensure-redis 2>/dev/null || docker info >/dev/null 2>&1 || .ci/ensure-redis
	.ci/with-burners bin/lockchaos run --service redis --scenario $(CHAOS_SCENARIOS) --out $(CHAOS_OUT)-loaded $(CHAOS_FLAGS)

## chaos-cluster: the Redis locks on a 3-shard Redis Cluster (a primary and a replica each): failovers the cluster decides, a primary split from the majority, manual failovers (safe, force, takeover), a slot moving under a held lock
chaos-cluster: build
	@.ci/ensure-redis
	bin/lockchaos run --service redis --scenario $(CLUSTER_SCENARIOS) --out $(CHAOS_OUT)-cluster $(CLUSTER_FLAGS) $(CHAOS_FLAGS)

## chaos-cluster-loaded: the same with CPU burners (2 per core) competing
chaos-cluster-loaded: build
	@.ci/ensure-redis
	.ci/with-burners bin/lockchaos run --service redis --scenario $(CLUSTER_SCENARIOS) --out $(CHAOS_OUT)-cluster-loaded $(CLUSTER_FLAGS) $(CHAOS_FLAGS)

## chaos-postgres: the PostgreSQL locks (row, row-outside, advisory, advisory-xact; server defaults and timeouts tuned to the TTL) under the same faults; installs PostgreSQL when it can
chaos-postgres: build
	@.ci/ensure-postgres
	bin/lockchaos run --service postgres --scenario $(PG_SCENARIOS) --out $(CHAOS_OUT)-postgres $(CHAOS_FLAGS)

## margins-postgres: how far the tuned PostgreSQL locks bend before they break (pause, slow-holder, one-way-loss), on real servers, with fewer, wider probes than the simulation (slow: minutes per lock and family)
margins-postgres: build
	@.ci/ensure-postgres
	bin/lockchaos margins --backend process --lock pg-row-outside-tuned,pg-advisory-tuned,pg-row-tuned --family pause,slow-holder,one-way-loss --seeds 3 --resolution 0.2 --recovery-ttl 0 --out $(PERF_OUT)/margins-postgres

## chaos-postgres-loaded: the same with CPU burners (2 per core) competing
chaos-postgres-loaded: build
	@.ci/ensure-postgres
	.ci/with-burners bin/lockchaos run --service postgres --scenario $(PG_SCENARIOS) --out $(CHAOS_OUT)-postgres-loaded $(CHAOS_FLAGS)

## chaos-etcd: the etcd locks (etcd-mutex, etcd-fenced, etcd-lease) on a 3-member etcd cluster: slow, paused and cut-off holders, a crashed pod, the leader killed or cut from its peers; installs etcd when it can
chaos-etcd: build
	@.ci/ensure-etcd
	bin/lockchaos run --service etcd --scenario $(ETCD_SCENARIOS) --out $(CHAOS_OUT)-etcd $(ETCD_FLAGS) $(CHAOS_FLAGS)

## chaos-etcd-loaded: the same with CPU burners (2 per core) competing
chaos-etcd-loaded: build
	@.ci/ensure-etcd
	.ci/with-burners bin/lockchaos run --service etcd --scenario $(ETCD_SCENARIOS) --out $(CHAOS_OUT)-etcd-loaded $(ETCD_FLAGS) $(CHAOS_FLAGS)

## chaos-liveness: the liveness rows (minority-partition, pod-crash, pod-crash-restart, abandoned-lease): every lock with a TTL recovers, no-ttl, long-ttl and a hung watchdog are caught stuck, Redlock acquires with a node down
chaos-liveness: build
	@.ci/ensure-redis 2>/dev/null || docker info >/dev/null 2>&1 || .ci/ensure-redis
	bin/lockchaos run --service redis --scenario $(LIVENESS) --out $(CHAOS_OUT)-liveness $(CHAOS_FLAGS)

## chaos-liveness-loaded: the liveness rows with CPU burners (2 per core) competing
chaos-liveness-loaded: build
	@.ci/ensure-redis 2>/dev/null || docker info >/dev/null 2>&1 || .ci/ensure-redis
	.ci/with-burners bin/lockchaos run --service redis --scenario $(LIVENESS) --out $(CHAOS_OUT)-liveness-loaded $(CHAOS_FLAGS)

## chaos-libs: the library rows (redis-py, rueidislock, a built-in lock in a driver process) as driver processes
chaos-libs: build
	@.ci/ensure-redis
	.ci/chaos-libs $(CHAOS_OUT)-libs $(CHAOS_FLAGS)

## chaos-critiques: the faults the best-known critiques are about (one-way partitions, clock jumps, power loss, real Sentinel failover), beyond the 30 s default matrix
chaos-critiques: build
	@.ci/ensure-redis
	bin/lockchaos run --scenarios-file scenarios/critiques.yaml --scenario $(CRITIQUES) --out $(CHAOS_OUT)-critiques $(CHAOS_FLAGS)

## libs-table: the library rows 10 times each (seed 2000), then their table written into docs/libraries.md (~4 min)
libs-table: build
	@.ci/ensure-redis
	.ci/chaos-libs $(PERF_OUT)/libs-table --repeat 10 --seed 2000; rc=$$?; \
	  bin/lockchaos report --markdown docs/libraries.md $(PERF_OUT)/libs-table && exit $$rc

## choose: which lock to use: every lock (built in, and the library rows) under the same fault families on Redis, Redis Cluster, PostgreSQL and etcd, 3 seeds a cell, with liveness, margins and cost beside each service's floor; the table goes into docs/choose.md and the README (~25 min)
choose: build ensure-redis ensure-postgres ensure-etcd
	.ci/choose --out $(CHOOSE_OUT) --markdown docs/choose.md --markdown README.md $(CHOOSE_FLAGS); rc=$$?; \
	  for p in recovery cost margins; do [ ! -f $(CHOOSE_OUT)/$$p.svg ] || cp $(CHOOSE_OUT)/$$p.svg docs/choose-$$p.svg; done; exit $$rc

## choose-quick: the short form (one scenario per family, one seed, the rows of choose.QuickRows), the CI gate (~5 min): one cell per core, as the run gates (4 at once took 3 min, but Redlock's liveness under a cut-off node then failed in 3 of 4 tables); a cell no run decided (exit 4: one seed of a cell that rarely reaches its moment) is said, not failed
choose-quick: build ensure-redis ensure-postgres ensure-etcd
	bin/lockchaos choose --quick --parallel 2 --out $(CHOOSE_OUT)-quick $(CHOOSE_FLAGS); rc=$$?; \
	  if [ $$rc = 4 ]; then echo "choose-quick: inconclusive cells (named above) are not a disagreement" >&2; rc=0; fi; exit $$rc

## choose-quick-loaded: the short form while CPU burners (2 per core) compete
choose-quick-loaded: build ensure-redis ensure-postgres ensure-etcd
	.ci/with-burners bin/lockchaos choose --quick --parallel 2 --out $(CHOOSE_OUT)-quick-loaded $(CHOOSE_FLAGS); rc=$$?; \
	  if [ $$rc = 4 ]; then echo "choose-quick-loaded: inconclusive cells (named above) are not a disagreement" >&2; rc=0; fi; exit $$rc

## margins: each built-in lock's breaking point per fault family, searched in the simulation, confirmed on real Redis (out/margins)
margins: build
	@.ci/ensure-redis
	bin/lockchaos margins --seed $(MARGINS_SEED) --out $(PERF_OUT)/margins

## margins-theory: the same search in the simulation only, a gate: exit 1 when a boundary disagrees with its lock's design
margins-theory: build
	bin/lockchaos margins --seed $(MARGINS_SEED) --confirm-on none --out $(PERF_OUT)/margins-theory

## margins-table: the same, its table written into docs/margins.md
margins-table: build
	@.ci/ensure-redis
	bin/lockchaos margins --seed $(MARGINS_SEED) --out $(PERF_OUT)/margins --markdown docs/margins.md

## chaos-sim: the matrix on the simulated backend (miniredis in virtual time; not the gate, not real Redis)
chaos-sim: build
	bin/lockchaos run --backend sim --seed $(SIM_SEED) --out $(CHAOS_OUT)-sim $(CHAOS_FLAGS)

## chaos-sim-vs-process: the matrix on sim and on real redis-server with one seed, outcomes side by side
chaos-sim-vs-process: build
	@.ci/ensure-redis
	@rm -rf $(CHAOS_OUT)-sim $(CHAOS_OUT)-process # compare never reads a stale run
	-bin/lockchaos run --backend sim --seed $(SIM_SEED) --out $(CHAOS_OUT)-sim $(CHAOS_FLAGS) >/dev/null
	-bin/lockchaos run --backend process --seed $(SIM_SEED) --out $(CHAOS_OUT)-process $(CHAOS_FLAGS) >/dev/null
	bin/lockchaos compare $(CHAOS_OUT)-sim $(CHAOS_OUT)-process

ensure-redis:
	@.ci/ensure-redis

ensure-postgres:
	@.ci/ensure-postgres

ensure-etcd:
	@.ci/ensure-etcd

## test: vet, then every test with the race detector (real redis-server processes), the deploy/ module's manifest checks
test: ensure-redis ensure-postgres ensure-etcd vet test-deploy
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) ./...
	# The matrix itself, one subtest per cell, and the etcd cells, at their
	# real timing (no -race, no other package beside them).
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^(TestMatrix|TestEtcdCells)$$' ./scenarios/

## vet: go vet on every package
vet:
	$(GO) vet ./...

GOLANGCI_VERSION ?= v2.15.0
GOLANGCI         := bin/golangci-lint-$(GOLANGCI_VERSION)/golangci-lint

## lint: gofmt, go vet, golangci-lint (.golangci.yml, at GOLANGCI_VERSION, installed into bin/ with go install when absent), actionlint on the workflow example
lint: vet $(GOLANGCI) lint-ci
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GOLANGCI) run ./...

$(GOLANGCI):
	GOBIN=$(CURDIR)/$(dir $@) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_VERSION)

## redis-image: a Redis image built from this machine's redis-server (docker import, no registry)
redis-image: ensure-redis
	backend/docker/build-redis-image.sh

## postgres-image: a PostgreSQL 15 image built from this machine's PostgreSQL, its cluster made at build time (docker import, no registry)
postgres-image: ensure-postgres
	backend/docker/build-postgres-image.sh

## build: the lockchaos binary in bin/
build:
	$(GO) build -ldflags "-X main.version=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o bin/lockchaos ./cmd/lockchaos

## bench: every benchmark below but bench-drivers (which needs a C compiler)
bench: bench-locks bench-checker

## bench-locks: lock cycles per second, direct vs through the proxies; one uncontended cycle of the Redis token lock and of every PostgreSQL lock beside each service's bare round trip
bench-locks: ensure-redis ensure-postgres
	$(GO) test -run '^$$' -bench 'BenchmarkLockCycle|BenchmarkServiceCycle' -benchtime $(BENCHTIME) ./lockimpl/

## bench-cluster: a 3-shard Redis Cluster's start (target under 3 s) and its own failover time (a primary's SIGKILL to its replica taking writes) beside cluster-node-timeout
bench-cluster: ensure-redis
	$(GO) test -run '^$$' -bench 'BenchmarkClusterReady|BenchmarkClusterFailover' -benchtime 5x ./deployment/

## bench-drivers: a pod's cycle in process vs in a driver process, for the Go driver, the C driver (the protocol's floor with Redis) and answer-only (the pipes alone, no Redis)
# The benchmark names its driver "driver" whichever command serves it: the
# headers say which run is which. The C binaries are built into bin/.
bench-drivers: ensure-redis
	@mkdir -p bin
	$(CC) -O2 -Wall -Wextra -o bin/lockchaos-cdriver drivers/c/lockchaos-cdriver.c
	$(CC) -O2 -Wall -Wextra -o bin/answer-only drivers/c/answer-only.c
	@echo '== driver: Go (lockchaos-driver --lock token)'
	$(GO) test -run '^$$' -bench BenchmarkDriverCycle -benchtime $(BENCHTIME) ./drivers/
	@echo '== driver: C (bin/lockchaos-cdriver)'
	LOCKCHAOS_BENCH_DRIVER=$(CURDIR)/bin/lockchaos-cdriver $(GO) test -run '^$$' -bench BenchmarkDriverCycle -benchtime $(BENCHTIME) ./drivers/
	@echo '== driver: answer-only (bin/answer-only: pipes alone, not a lock)'
	LOCKCHAOS_BENCH_DRIVER=$(CURDIR)/bin/answer-only $(GO) test -run '^$$' -bench BenchmarkDriverCycle -benchtime $(BENCHTIME) ./drivers/

## bench-checker: loading and checking 1M-event histories of every shape (contended, serial, 1% indefinite, 200 clients; 1 and 10 keys), plain porcupine beside them
bench-checker:
	$(GO) test -run '^$$' -bench 'BenchmarkCheck|BenchmarkPlainPorcupine' -benchtime 1x -timeout 30m ./checker/

## detection: every cell 20 times (seeds 1000..1019): detection rate and median time to first violation
detection: ensure-redis build
	bin/lockchaos run --seed 1000 --repeat 20 --out $(PERF_OUT)/detection

## soak: the safe cells SOAK_RUNS times each (13 safe cells x 40 = 520 runs): false positives must be 0
soak: ensure-redis build
	bin/lockchaos run --seed 5000 --repeat $(SOAK_RUNS) --out $(PERF_OUT)/soak \
	  --scenario baseline,slow-holder,gc-pause,slow-reply,client-partition,node-restart-delayed,minority-partition \
	  --lock naive,token,token-watchdog,redlock,fenced --expect safe

## perf: every figure of docs/performance.md (about 20 minutes; outputs in out/perf)
perf: ensure-redis build
	mkdir -p $(PERF_OUT)
	$(GO) test -run '^$$' -bench BenchmarkLockCycle -benchtime $(BENCHTIME) -count 3 ./lockimpl/ | tee $(PERF_OUT)/locks.txt
	$(GO) test -run '^$$' -bench 'BenchmarkCheck' -benchtime 1x ./checker/ | tee $(PERF_OUT)/checker.txt
	/usr/bin/time -f "make chaos: %e s wall, %M KB peak RSS" bin/lockchaos run --seed 7 --out $(PERF_OUT)/chaos 2>&1 | tail -3 | tee $(PERF_OUT)/chaos.txt
	$(MAKE) detection soak

## fuzz: the checker agreement fuzzer (porcupine vs brute force vs interval sweep)
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzCheckersAgree -fuzztime $(FUZZTIME) ./checker/

.PHONY: lint-ci

## lint-ci: actionlint on the GitHub Actions example (docs/examples/github-actions.yml); installs actionlint ACTIONLINT_VERSION into bin/ with go install when absent
# actionlint also runs shellcheck on the run: scripts when shellcheck is on PATH.
ACTIONLINT_VERSION ?= v1.7.12
ACTIONLINT         := bin/actionlint-$(ACTIONLINT_VERSION)/actionlint

lint-ci: $(ACTIONLINT)
	$(ACTIONLINT) docs/examples/github-actions.yml

$(ACTIONLINT):
	GOBIN=$(CURDIR)/$(dir $@) $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)

.PHONY: test-deploy

## test-deploy: decode every manifest of deploy/kubernetes strictly with the k8s.io/api types and check them (deploy/ is its own module, so k8s.io/api stays out of go.mod)
test-deploy:
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...
