// Package service names the kinds of lock server lockchaos runs: the
// servers a lock takes its leases from. A lock names its service
// (lockimpl.Spec.Service), a cell asks its backend for nodes of that
// service (backend.Needs.Service, backend.NodeConfig.Service), and the
// backend answers through its one Supports: a backend that cannot start
// a service's servers skips the cell with the reason in words.
//
// A service's servers live in a folder of their own under service/
// (service/postgres); Redis, the first, lives in backend/ for history's
// sake. docs/architecture.md has the recipe for adding one.
package service

import (
	"fmt"
	"slices"
	"strings"
)

// Name is a lock service's name in specs, plans, histories and reports.
type Name string

// The services lockchaos knows.
const (
	// Redis is every Redis deployment lockchaos runs (single, independent,
	// primary-replica, Sentinel). The zero Name means Redis, so a lock or
	// a cell that names none is the Redis one it always was.
	Redis Name = "redis"
	// Postgres is PostgreSQL: row locks (SELECT ... FOR UPDATE) and
	// advisory locks, taken on a session or a transaction.
	Postgres Name = "postgres"
	// Etcd is etcd: a cluster of three members (raft), locks on leases
	// (concurrency.Mutex, a plain lease key), the revision as the fence.
	Etcd Name = "etcd"
)

// Names lists the known services, Redis first.
var Names = []Name{Redis, Postgres, Etcd}

// Or returns n, or Redis for the zero Name.
func (n Name) Or() Name {
	if n == "" {
		return Redis
	}
	return n
}

// IsRedis reports whether n is Redis (the zero Name included).
func (n Name) IsRedis() bool { return n.Or() == Redis }

// Validate reports an unknown service, listing the valid ones.
func (n Name) Validate() error {
	if n == "" || slices.Contains(Names, n) {
		return nil
	}
	valid := make([]string, len(Names))
	for i, s := range Names {
		valid[i] = string(s)
	}
	return fmt.Errorf("unknown lock service %q (valid: %s)", string(n), strings.Join(valid, ", "))
}

// Server is how a report names the service's server, in a sentence
// ("the Redis node", "the PostgreSQL server").
func (n Name) Server() string {
	switch n.Or() {
	case Postgres:
		return "PostgreSQL server"
	case Etcd:
		return "etcd member"
	}
	return "Redis node"
}
