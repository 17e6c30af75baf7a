package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// ErrNoPostgresImage means the PostgreSQL image is not on this machine;
// the wrapping error says which image and how to build it.
var ErrNoPostgresImage = errors.New("docker: no PostgreSQL image")

// pgImage is the PostgreSQL image and whether the engine has it, asked
// once per backend (on the first PostgreSQL cell, so a Redis run never
// asks). It is not pulled: no registry image has lockchaos's cluster and
// settings baked in.
type pgImage struct {
	name string
	once sync.Once
	err  error
}

// postgresImageThere says whether the engine has the PostgreSQL image.
func (b *Backend) postgresImageThere() error {
	b.pg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := b.cli.ImageInspect(ctx, b.pg.name); err != nil {
			b.pg.err = fmt.Errorf("%w: %s is not on this machine (%w): run `make postgres-image` (builds %s "+
				"from this machine's PostgreSQL 15)", ErrNoPostgresImage, b.pg.name, err, DefaultPostgresImage)
		}
	})
	return b.pg.err
}

// supportsPostgres answers Supports for a PostgreSQL cell: one server per
// node, killed, restarted and paused as a container; no standby, no
// clock, no power loss.
func (b *Backend) supportsPostgres(n backend.Needs) error {
	if err := b.postgresImageThere(); err != nil {
		return backend.Unsupported("%v", err)
	}
	switch {
	case n.Replica || n.Sentinel:
		return backend.Unsupported("the docker backend runs PostgreSQL as one server: a streaming standby " +
			"that a failover promotes is not built yet")
	case n.Clock:
		return backend.Unsupported("moving a PostgreSQL server's clock is not built (the clock shim is " +
			"tried on redis-server only)")
	case n.Persistence:
		return backend.Unsupported("power loss cuts a Redis append-only file; PostgreSQL's WAL is not modelled")
	}
	return nil
}
