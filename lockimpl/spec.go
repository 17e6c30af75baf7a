package lockimpl

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockchaos/lockchaos/internal/safename"
	"github.com/lockchaos/lockchaos/service"
)

// Spec is what a lock is to the harness: its traits as data, and how to
// build one pod's Locker. The harness reads nothing else about a lock: the
// topology a cell starts, whether the protected resource checks fences,
// whether renewals are recorded and what a report says all come from here,
// so a user's lock is as first-class as a built-in one.
type Spec struct {
	// Name identifies the lock in scenarios, histories and reports, and
	// names its cells' folders: letters, digits, ".", "_" and "-",
	// starting with a letter or digit, at most 64 characters, no "..".
	Name string
	// Doc is one line for people ("SET NX PX, then an unconditional DEL").
	Doc string
	// Service is the kind of server the lock takes its leases from: ""
	// (Redis) or service.Postgres. The cell starts nodes of that service
	// and asks its backend for them; Nodes counts them.
	Service service.Name
	// Settings are the server settings the lock runs with, in words
	// ("idle_in_transaction_session_timeout = 2 TTL, tcp_user_timeout =
	// 1 TTL"; "" for the server's defaults): part of what the lock is,
	// so every report shows them.
	Settings string
	// ServerArgs are the same settings as the server's command line
	// takes them (PostgreSQL: "-c", "name=value" pairs) for a cell's
	// TTL, already scaled. Nil: the server's defaults.
	ServerArgs func(ttl time.Duration) []string
	// InTransaction says the protected resource lives in the lock's own
	// transaction (its leases are TxLeases): a write commits only while
	// the lock's session lives, so the resource is fenced by the
	// transaction, and the checker judges the resource, not the overlap
	// of beliefs.
	InTransaction bool
	// Nodes is the Redis deployment the lock needs: 0 for an in-process
	// lock (no Redis at all: it cannot exclude across pods, so it is unsafe
	// in every scenario); 1 for one service address (a single node, or a
	// primary with a replica behind it); N > 1 for N independent primaries
	// (Redlock).
	Nodes int
	// Fencing says the lock hands out fencing tokens that the protected
	// resource must check (on reads and writes). The checker then judges
	// the resource, not the overlap of beliefs.
	Fencing bool
	// Renews says the lock keeps a held lease alive (a watchdog).
	Renews bool
	// Lease is how long the lease the lock takes lasts, in the cell's
	// TTLs: 0 for one TTL (the usual), more for a lock that takes a
	// longer static lease, negative for a key that never expires. The
	// margins' theory reads it; the checker never does (the witness sees
	// the real lease).
	Lease float64
	// NodeTimeout bounds each node call to this fraction of the TTL
	// (Redlock's timeout factor); 0: only the client's call timeout
	// does. The margins' theory reads it.
	NodeTimeout float64
	// BlindRelease says the lock's release deletes the key whoever holds
	// it now (the naive DEL): a release that lands after its lease lapsed
	// frees another pod's. The margins' theory reads it.
	BlindRelease bool
	// SignalsLoss says Lease.Lost closes when the lock learns it lost the
	// lease.
	SignalsLoss bool
	// BringsClient says the lock connects to Env.Addrs with a client of its
	// own instead of using Env.Clients (a driver process). Cells behind
	// Sentinel, whose clients find the primary through the Sentinels and
	// have no fixed address, skip such a lock.
	BringsClient bool
	// NeedsReplica says the lock only works with a replica behind its node
	// (it waits for one to acknowledge): cells without one are not
	// applicable.
	NeedsReplica bool
	// OutOfProcess says the lock runs in a process of its own (a driver
	// process), outside the harness's goroutines: a backend in virtual
	// time cannot run it.
	OutOfProcess bool
	// New builds one pod's Locker. It is called once per pod per cell, for
	// every pod at once (from as many goroutines), before any traffic.
	New func(Env) (Locker, error)
}

// Env is what New gets: everything one pod knows, already wired through
// the cell's proxies and fault hooks.
type Env struct {
	// Pod is the pod's index in the cell.
	Pod int
	// Clients holds one go-redis client per node the lock needs (Nodes of
	// them), through the pod's own proxies. A pod pause freezes them.
	Clients []redis.UniversalClient
	// Addrs are the same nodes' addresses as the pod sees them (its
	// proxies), for locks that bring their own client.
	Addrs []string
	// Dial connects to one of Addrs the way the pod's own clients do: a
	// pod pause freezes every connection it made. Locks that bring their
	// own client should dial with it (go-redis: Options.Dialer; rueidis:
	// ClientOption.DialCtxFn). Nil means net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TTL is the cell's lease time, already scaled to the machine.
	TTL time.Duration
	// CallTimeout bounds each Redis call a lock makes on its own (renewals).
	CallTimeout time.Duration
	// OnRenew, if set, records a renewal attempt; locks that renew call it
	// after every attempt.
	OnRenew func(Renewal)
	// OnPause, if set, registers what to do when the pod is paused and
	// resumed, for locks whose work happens outside the harness's process
	// (a driver process is stopped with SIGSTOP and continued).
	OnPause func(stop, cont func())
	// OnCrash, if set, registers what must die at once when the pod
	// crashes, for locks whose work happens outside the harness's process
	// (a driver process gets SIGKILL on its process group). A restarted pod
	// is a new Env and a new Locker.
	OnCrash func(kill func())
	// Dir is the cell's folder, for files a lock keeps (a driver's
	// stderr); "" when the cell keeps none.
	Dir string
	// Postgres is where a PostgreSQL lock's objects live on its server
	// (zero: a server the harness started).
	Postgres PGTarget
}

// Validate reports a spec that cannot work.
func (s Spec) Validate() error {
	switch {
	case !safename.Valid(s.Name):
		// The name becomes a folder (OUT/SCENARIO/LOCK) and a file name.
		return fmt.Errorf("%w: lock name %q: use %s", ErrInvalidConfig, s.Name, safename.Rule)
	case s.New == nil:
		return fmt.Errorf("%w: lock %s has no constructor (Spec.New)", ErrInvalidConfig, s.Name)
	case s.Nodes < 0 || s.Nodes > 15:
		return fmt.Errorf("%w: lock %s: nodes %d out of range 0..15", ErrInvalidConfig, s.Name, s.Nodes)
	}
	if err := s.Service.Validate(); err != nil {
		return fmt.Errorf("%w: lock %s: %w", ErrInvalidConfig, s.Name, err)
	}
	return nil
}

// Build makes one pod's Locker, checking first that the environment has
// what the spec says the lock needs.
func (s Spec) Build(env Env) (Locker, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Service.IsRedis() && len(env.Clients) < s.Nodes {
		return nil, fmt.Errorf("%w: %s needs %d Redis client(s), got %d", ErrInvalidConfig, s.Name, s.Nodes, len(env.Clients))
	}
	l, err := s.New(env)
	if err != nil {
		return nil, fmt.Errorf("lockimpl: %s: %w", s.Name, err)
	}
	return l, nil
}

// Describe renders the traits in a few words: "3 independent nodes, renews".
func (s Spec) Describe() string {
	var parts []string
	switch s.Nodes {
	case 0:
		parts = append(parts, "in-process")
	case 1:
		parts = append(parts, "1 node")
	default:
		parts = append(parts, fmt.Sprintf("%d independent nodes", s.Nodes))
	}
	if s.Service == service.Etcd {
		// One cluster that replicates by raft, not independent servers.
		parts[0] = fmt.Sprintf("%d members", s.Nodes)
	}
	if !s.Service.IsRedis() {
		parts[0] = fmt.Sprintf("%s, %s", s.Service, parts[0])
	}
	if s.InTransaction {
		parts = append(parts, "resource in its transaction")
	}
	for _, t := range []struct {
		on   bool
		name string
	}{{s.Fencing, "fencing"}, {s.Renews, "renews"}, {s.SignalsLoss, "signals loss"}} {
		if t.on {
			parts = append(parts, t.name)
		}
	}
	if s.Settings != "" {
		parts = append(parts, s.Settings)
	}
	return strings.Join(parts, ", ")
}

var registry struct {
	sync.Mutex
	specs []Spec
}

// Register adds a lock to the registry, so scenario files and the command
// line can name it. Names are unique.
func Register(s Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	registry.Lock()
	defer registry.Unlock()
	if slices.ContainsFunc(registry.specs, func(o Spec) bool { return o.Name == s.Name }) {
		return fmt.Errorf("%w: lock %q is already registered", ErrInvalidConfig, s.Name)
	}
	registry.specs = append(registry.specs, s)
	return nil
}

// Lookup returns the registered lock of that name; an unknown name is an
// error listing the valid ones.
func Lookup(name string) (Spec, error) {
	registry.Lock()
	defer registry.Unlock()
	for _, s := range registry.specs {
		if s.Name == name {
			return s, nil
		}
	}
	return Spec{}, fmt.Errorf("%w %q (valid: %s)", ErrUnknownLock, name, strings.Join(namesLocked(), ", "))
}

// Specs returns every registered lock, built-ins first, in registration order.
func Specs() []Spec {
	registry.Lock()
	defer registry.Unlock()
	return slices.Clone(registry.specs)
}

// Names lists every registered lock, in registration order.
func Names() []string {
	registry.Lock()
	defer registry.Unlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, len(registry.specs))
	for i, s := range registry.specs {
		out[i] = s.Name
	}
	return out
}

// The built-in lock names, in the order reports show them.
const (
	NameMutex         = "mutex"
	NameNaive         = "naive"
	NameToken         = "token"
	NameTokenWatchdog = "token-watchdog"
	NameRedlock       = "redlock"
	NameFenced        = "fenced"
)

// The built-ins register here, in one list, so their order (the Redis
// locks, then the PostgreSQL ones, then etcd's) does not hang on file names.
func init() {
	redisLocks := []Spec{mutexSpec, naiveSpec, tokenSpec, watchdogSpec, redlockSpec, fencedSpec, tokenWaitSpec,
		noTTLSpec, longTTLSpec}
	for _, s := range append(append(redisLocks, pgSpecs...), etcdSpecs...) {
		if err := Register(s); err != nil {
			panic(err)
		}
	}
}
