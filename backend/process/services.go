package process

import (
	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/etcd"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// supportsService answers Supports for a cell on a service other than
// Redis: what the process backend can run of it here, or why not.
func supportsService(n backend.Needs) error {
	if n.Service == service.Postgres {
		if err := postgres.Check(); err != nil {
			return backend.Unsupported("%v", err)
		}
		switch {
		case n.Sentinel:
			return backend.Unsupported("Redis Sentinel watches Redis servers only; a PostgreSQL failover " +
				"runs on the primary-replica topology (a streaming standby the fault promotes)")
		case n.Clock:
			return backend.Unsupported("moving a PostgreSQL server's clock is not built (the clock shim is " +
				"tried on redis-server only)")
		case n.Persistence:
			return backend.Unsupported("power loss cuts a Redis append-only file; PostgreSQL's WAL is not modelled")
		}
		return nil
	}
	if n.Service == service.Etcd {
		if err := etcd.Check(); err != nil {
			return backend.Unsupported("%v", err)
		}
		switch {
		case n.Sentinel || n.Replica || n.Cluster:
			return backend.Unsupported("etcd members replicate and elect their leader by raft; a Redis " +
				"replica, Sentinel or cluster fault does not apply")
		case n.Clock:
			return backend.Unsupported("moving an etcd member's clock is not built: etcd is a Go program, " +
				"which reads time through the vDSO, not the libc the clock shim replaces")
		case n.Persistence:
			return backend.Unsupported("power loss cuts a Redis append-only file; etcd's WAL is not modelled")
		}
		return nil
	}
	return backend.Unsupported("the process backend cannot start %s servers", n.Service)
}
