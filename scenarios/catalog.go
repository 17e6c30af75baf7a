// Package scenarios is the matrix as data: each scenario names a topology,
// a workload scaled to seconds, a fault schedule, and what each lock is
// expected to do under it. The runner builds a cell (its own nodes, links
// and clients), runs it, checks the history and compares the verdict with
// the expectation.
package scenarios

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/faults"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/results"
)

// Expectation is what a cell must show of one property group, Expect of
// both (results', re-exported so a scenario reads naturally).
type (
	Expectation = results.Expectation
	Expect      = results.Expect
)

// Expectations.
const (
	Safe          = results.Safe
	Unsafe        = results.Unsafe
	Either        = results.Either
	NotApplicable = results.NotApplicable
	Live          = results.Live
	Stuck         = results.Stuck
)

// Sentinel errors.
var (
	ErrUnknownScenario = errors.New("scenarios: unknown scenario")
	ErrInvalid         = errors.New("scenarios: invalid scenario")
	ErrInvalidShard    = errors.New("scenarios: invalid shard")
	ErrInvalidSeed     = errors.New("scenarios: invalid seed")
	ErrTooLarge        = errors.New("scenarios: cell too large")
	ErrUnsafePath      = errors.New("scenarios: unsafe path")
	ErrUnknownField    = errors.New("scenarios: unknown field")
	ErrEmptyFile       = errors.New("scenarios: empty scenarios file")
	ErrNoBackend       = errors.New("scenarios: no backend")
)

// ms is shorthand for the catalog.
func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// expect maps each built-in Redis lock to its expectation in a scenario:
// one word (Safe) speaks of safety, with liveness live; andLive and
// andStuck (or an Expect) say both; nil leaves a lock out of it.
func expect(naive, token, watchdog, redlock, fenced results.Expecter) map[string]Expect {
	m := map[string]Expect{}
	for lock, e := range map[string]results.Expecter{lockimpl.NameNaive: naive, lockimpl.NameToken: token,
		lockimpl.NameTokenWatchdog: watchdog, lockimpl.NameRedlock: redlock, lockimpl.NameFenced: fenced} {
		if e != nil {
			m[lock] = e.Expected()
		}
	}
	return m
}

// andLive and andStuck pair a safety expectation with a liveness one.
func andLive(safety Expectation) Expect  { return Expect{Safety: safety, Liveness: Live} }
func andStuck(safety Expectation) Expect { return Expect{Safety: safety, Liveness: Stuck} }

// Catalog returns the built-in scenarios (DESIGN section 5), in order.
// Times are scaled down: a TTL of hundreds of milliseconds, cells of
// about two seconds, faults firing several times per cell.
func Catalog() []Scenario {
	baseline := expect(Safe, Safe, Safe, Safe, Safe)
	baseline[lockimpl.NameMutex] = andLive(Unsafe)
	list := []Scenario{{
		Name:        "baseline",
		Description: "no faults; work well under the TTL",
		Expect:      baseline,
	}}
	list = append(list, clientScenarios()...)
	list = append(list, nodeScenarios()...)
	list = append(list, livenessScenarios()...)
	list = append(list, clusterScenarios()...)
	list = append(list, etcdScenarios()...)
	return withPostgres(list)
}

// clientScenarios are the rows whose faults strike a holder: its work,
// its process, its replies, its link to Redis.
func clientScenarios() []Scenario {
	// Cut off, a holder's release is lost (its connection does not
	// survive the partition): no-ttl's key stays for good, long-ttl's for
	// ten TTLs; the others' leases lapse within one.
	partition := lifetimeLocks(expect(Either, Either, Unsafe, Either, Safe), andStuck(Safe), andStuck(Safe))
	return []Scenario{
		{
			Name:        "slow-holder",
			Description: "some critical sections run past the TTL (1.5x)",
			Faults:      []faults.Spec{{Kind: "slow-holder"}},
			Expect:      expect(Unsafe, Unsafe, Safe, Unsafe, Safe),
		},
		{
			Name:        "gc-pause",
			Description: "a holder is frozen (stop-the-world) past the TTL (1.5x)",
			Faults:      []faults.Spec{{Kind: "client-pause"}},
			Expect:      expect(Unsafe, Unsafe, Unsafe, Unsafe, Safe),
		},
		{
			Name:        "slow-reply",
			Description: "the reply to a winning acquire arrives after the TTL (1.5x)",
			// The client must wait for the late reply rather than time out.
			CallTimeout: 2 * time.Second,
			Faults:      []faults.Spec{{Kind: "slow-reply"}},
			GapMin:      ms(20), GapMax: ms(80),
			Expect: expect(Unsafe, Unsafe, Unsafe, Safe, Safe),
		},
		{
			Name:        "client-partition",
			Description: "a holder is silently cut off from Redis during a long (2x TTL) critical section",
			Faults:      []faults.Spec{{Kind: "client-partition"}},
			Expect:      partition,
		},
	}
}

// nodeScenarios are the rows whose faults strike the Redis nodes: a
// failover, restarts, a partitioned node.
func nodeScenarios() []Scenario {
	return []Scenario{
		{
			Name:        "failover",
			Description: "the primary dies before replicating a fresh lock key; the replica is promoted",
			// Holders must still be working when the failover completes.
			WorkMin: ms(40), WorkMax: ms(120),
			Faults: []faults.Spec{{Kind: "failover"}},
			GapMin: ms(100), GapMax: ms(200),
			Expect: expect(Unsafe, Unsafe, Unsafe, NotApplicable, Either),
		},
		{
			Name:        "node-restart",
			Description: "Redlock nodes are killed in turn while a lock is held and restart empty at once",
			TTL:         ms(500),
			// Long enough that a holder still holds when a restart is done,
			// which takes several times longer on a busy machine.
			WorkMin: ms(100), WorkMax: ms(250),
			Faults: []faults.Spec{{Kind: "node-restart"}},
			GapMin: ms(10), GapMax: ms(40),
			Expect: map[string]Expect{lockimpl.NameRedlock: andLive(Unsafe)},
		},
		{
			Name:        "node-restart-delayed",
			Description: "same, but each node stays down past the TTL before restarting empty",
			WorkMin:     ms(20), WorkMax: ms(60),
			Faults: []faults.Spec{{Kind: "node-restart-delayed"}},
			GapMin: ms(20), GapMax: ms(60),
			Expect: map[string]Expect{lockimpl.NameRedlock: andLive(Safe)},
		},
		{
			Name:        "minority-partition",
			Description: "one of three Redlock nodes is unreachable (silently) for 4x TTL at a time",
			// Longer than fault-tolerant's bound (three call timeouts), so a
			// lock that needs every node is seen refusing everyone.
			Faults: []faults.Spec{{Kind: "minority-partition", Params: faults.MinorityPartitionParams{Duration: ms(1200)}}},
			Expect: map[string]Expect{lockimpl.NameRedlock: andLive(Safe)},
		},
	}
}

// Names lists the catalog's scenario names.
func Names(list []Scenario) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Name
	}
	return out
}

// Get returns the named catalog scenario, with defaults filled.
func Get(name string) (Scenario, error) {
	return find(Catalog(), name)
}

func find(list []Scenario, name string) (Scenario, error) {
	for _, s := range list {
		if s.Name == name {
			return s.WithDefaults(), nil
		}
	}
	names := Names(list)
	sort.Strings(names)
	return Scenario{}, fmt.Errorf("%w %q (valid: %s)", ErrUnknownScenario, name, strings.Join(names, ", "))
}
