package external

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// Schemas on someone else's PostgreSQL.
//
// A cell's objects are two tables (postgres.TablesSQL) in a schema of its
// own, "lockchaos_<cell seed>" (a minus sign written "m"), made when the
// cell begins and dropped with everything in it when it ends; its advisory
// locks take a class of its own (classFor), so they meet neither the
// user's nor another cell's. Nothing outside such a schema is written.
//
// The owner marker is an advisory lock, (the cell's class, 0), held by the
// cell's admin session from before the schema is made until after it is
// dropped. A harness killed outright leaves its schema, but its sessions
// end as the kernel closes their sockets (or, if its machine vanished,
// when the keepalives of adminSettings give up), and with them the
// marker: every external run begins by dropping each lockchaos_<n> schema
// whose marker it can take. A live run's schema is never touched.

// SchemaPrefix begins every schema the harness makes on a user's server.
const SchemaPrefix = "lockchaos_"

// schemaTag is the comment on every schema the harness makes: with the
// name, its owner (the harness's role) and a free marker, what a sweep
// checks before it drops one, so a user's own lockchaos_2024 is never
// dropped.
const schemaTag = "lockchaos cell: dropped when the cell ends, or by the next run if it was killed"

// ours is the condition, on pg_namespace n, that a schema is one the
// harness made with this role.
const ours = "n.nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) AND " +
	"obj_description(n.oid, 'pg_namespace') = '" + schemaTag + "'"

const resourceTable = postgres.ResourceTable

// schemaName matches the harness's schemas and nothing else.
var schemaName = regexp.MustCompile(`^lockchaos_m?\d+$`)

// SchemaFor is the schema of the cell whose keys are under keyPrefix
// ("lockchaos:<cell seed>:").
func SchemaFor(keyPrefix string) (string, error) {
	p, ok := cellPrefix(keyPrefix)
	if !ok || p != keyPrefix {
		return "", fmt.Errorf("%w: key prefix %q is not a cell's (%s<seed>:)", backend.ErrInvalidConfig, keyPrefix, Prefix)
	}
	seed := strings.TrimSuffix(strings.TrimPrefix(p, Prefix), ":")
	return SchemaPrefix + strings.Replace(seed, "-", "m", 1), nil
}

// classFor is the advisory class of a cell's schema: a hash of its name,
// never 0 (the marker's id is 0 within the class, the locks' ids from 1).
func classFor(schema string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(schema))
	c := int32(h.Sum32())
	if c == 0 {
		c = 1
	}
	return c
}

// PostgresTarget is where a cell's PostgreSQL locks live on the user's
// server: its URL, the cell's schema and advisory class. keyPrefix ""
// gives the URL alone, for a session that touches no object (a SELECT 1).
func (b *Backend) PostgresTarget(keyPrefix string) (lockimpl.PGTarget, error) {
	if b.pg == nil {
		return lockimpl.PGTarget{}, fmt.Errorf("%w: no --postgres-url", backend.ErrInvalidConfig)
	}
	if keyPrefix == "" {
		return lockimpl.PGTarget{URL: b.pg.url}, nil
	}
	schema, err := SchemaFor(keyPrefix)
	if err != nil {
		return lockimpl.PGTarget{}, err
	}
	return lockimpl.PGTarget{URL: b.pg.url, Schema: schema, AdvisoryClass: classFor(schema)}, nil
}

// claimSchema takes the cell's marker, then makes its schema (dropping a
// leftover of the same name first, which the sweep would have dropped) and
// tables. release drops the schema and ends the admin session, which
// frees the marker.
func (s *pgServer) claimSchema(keyPrefix string) (release func(), err error) {
	schema, err := SchemaFor(keyPrefix)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	fail := func(what string, err error) (func(), error) {
		_ = c.Close(context.Background())
		return nil, fmt.Errorf("external: postgres %s: %s schema %s: %w", s.addr, what, schema, err)
	}
	var got bool
	if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, 0)", classFor(schema)).Scan(&got); err != nil {
		return fail("mark", err)
	}
	if !got {
		return fail("mark", fmt.Errorf("another run of this cell seed is using it now"))
	}
	var exists, mine bool
	if err := c.QueryRow(ctx, "SELECT count(*) > 0, coalesce(bool_and("+ours+"), false) FROM pg_namespace n WHERE nspname = $1",
		schema).Scan(&exists, &mine); err != nil {
		return fail("look for", err)
	}
	if exists && !mine {
		return fail("make", fmt.Errorf("a schema of that name is there and is not the harness's: it is left alone; "+
			"run with another --seed"))
	}
	id := pgx.Identifier{schema}.Sanitize()
	sql := "DROP SCHEMA IF EXISTS " + id + " CASCADE; CREATE SCHEMA " + id + "; COMMENT ON SCHEMA " + id + " IS '" +
		schemaTag + "'; SET search_path = " + id + "; " + postgres.TablesSQL
	if _, err := c.Exec(ctx, sql); err != nil {
		return fail("make", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// Bounded: a lock session the server has not ended yet would
			// block the drop; then the schema stays, the marker goes with
			// this session, and the next run's sweep drops it.
			_, _ = c.Exec(ctx, "SET lock_timeout = '5s'")
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+id+" CASCADE")
			_ = c.Close(ctx) // the session ends: the marker goes with it
		})
	}, nil
}

// sweepSchemas drops every lockchaos_<n> schema whose marker is free (its
// run is gone) and returns how many. It does what it can within ctx.
func (s *pgServer) sweepSchemas(ctx context.Context) (int, error) {
	c, err := s.connect(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "SET lock_timeout = '2s'"); err != nil {
		return 0, err
	}
	rows, err := c.Query(ctx, "SELECT nspname FROM pg_namespace n WHERE nspname LIKE 'lockchaos\\_%' AND "+ours)
	if err != nil {
		return 0, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, err
	}
	n := 0
	for _, schema := range names {
		if !schemaName.MatchString(schema) {
			continue // not the harness's: never touched
		}
		var free bool
		if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1, 0)", classFor(schema)).Scan(&free); err != nil {
			return n, err
		}
		if !free {
			continue // a live run's
		}
		_, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		_, _ = c.Exec(ctx, "SELECT pg_advisory_unlock($1, 0)", classFor(schema))
		if err == nil {
			n++
		} // else: one that cannot go now does not keep the others
	}
	return n, ctx.Err()
}
