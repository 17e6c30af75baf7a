package external

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lockchaos/lockchaos/backend"
)

// A user's own PostgreSQL server (--postgres-url): one node, no standby,
// only network faults. Every cell keeps to a schema of its own and an
// advisory class of its own (see schemas.go); the tuned locks set their
// timeouts per session (lockimpl.PGTarget), so the harness never runs
// ALTER SYSTEM and needs no superuser: a role that may create schemas in
// the database is enough.

// Sentinel errors of a user's PostgreSQL.
var (
	// ErrPostgresUnreachable: the server at --postgres-url did not let the
	// harness in (no answer, refused, authentication failed).
	ErrPostgresUnreachable = errors.New("external: cannot log in to postgres")
	// ErrPostgresRights: the role may not do what a cell needs (create a
	// schema), or the server cannot take writes (a standby).
	ErrPostgresRights = errors.New("external: postgres refuses what the harness needs")
)

// pgServer is the server --postgres-url names.
type pgServer struct {
	url  string // as given (with any password: never printed)
	cfg  *pgx.ConnConfig
	addr string // host:port, what the proxies front
}

// urlHint is what a user reads after any --postgres-url error.
const urlHint = "want postgres://USER@HOST:PORT/DATABASE (the password in PGPASSWORD or ~/.pgpass, or in the URL)"

// parsePostgresURL checks --postgres-url before anything is dialled.
func parsePostgresURL(raw string) (*pgServer, error) {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
		// A URL, not a key=value string: driver processes are handed it,
		// rewritten to their proxy, and every client library reads URLs.
		return nil, fmt.Errorf("%w: --postgres-url %s: not a postgres:// URL; %s", backend.ErrInvalidConfig, Redact(raw), urlHint)
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		// pgx's own words quote the URL; the reason alone, so no shape of
		// password can show.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, fmt.Errorf("%w: --postgres-url %s: cannot parse: %w; %s", backend.ErrInvalidConfig, Redact(raw), err, urlHint)
	}
	if cfg.Host == "" || strings.HasPrefix(cfg.Host, "/") {
		return nil, fmt.Errorf("%w: --postgres-url %s: a Unix socket (%q) cannot go through the harness's proxies: "+
			"give a TCP host and port; %s", backend.ErrInvalidConfig, Redact(raw), cfg.Host, urlHint)
	}
	for _, f := range cfg.Fallbacks {
		if f.Host != cfg.Host || f.Port != cfg.Port {
			// The locks go through one proxy, to the first host; an admin
			// session could fall back to another server.
			return nil, fmt.Errorf("%w: --postgres-url %s names several hosts: give one server's", backend.ErrInvalidConfig, Redact(raw))
		}
	}
	return &pgServer{url: raw, cfg: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}, nil
}

// CheckPostgresURL says what is wrong with --postgres-url before anything
// is dialled (nil: it parses, and names a TCP host and port).
func CheckPostgresURL(raw string) error {
	_, err := parsePostgresURL(raw)
	return err
}

// Redact is a --postgres-url (or a command line holding one) fit to
// print: every password masked, in a URL's user part (up to the token's
// last "@": a password may hold "/" or "@"), in its query, or in a
// key=value string, even in one that does not parse.
func Redact(raw string) string {
	raw = urlPassword.ReplaceAllString(raw, "${1}xxxxx@")
	raw = quotedPassword.ReplaceAllString(raw, "${1}'xxxxx'")
	return barePassword.ReplaceAllString(raw, "${1}xxxxx")
}

var (
	urlPassword    = regexp.MustCompile(`(://[^:@/\s'"]*:)[^\s'"]*@`)
	quotedPassword = regexp.MustCompile(`(password\s*=\s*)'[^']*'`)
	barePassword   = regexp.MustCompile(`(password\s*=\s*)[^&\s'"]+`)
)

// WithoutPassword is --postgres-url as a rerun line gives it: no password
// at all, so the rerun reads PGPASSWORD or ~/.pgpass (a masked one would
// be sent as it is).
func WithoutPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redact(raw)
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") {
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// adminSettings are the harness's own sessions' settings on a user's
// server: immune to the role's idle timeouts (an owner marker that timed
// out would let another run's sweep drop a live cell's schema), and
// keepalives that notice a vanished harness in about half a minute.
var adminSettings = map[string]string{
	"application_name":                    "lockchaos-admin",
	"idle_session_timeout":                "0",
	"idle_in_transaction_session_timeout": "0",
	"tcp_keepalives_idle":                 "10",
	"tcp_keepalives_interval":             "10",
	"tcp_keepalives_count":                "2",
}

// connect opens an admin session, straight to the server (no proxy, no
// fault).
func (s *pgServer) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg := s.cfg.Copy()
	for k, v := range adminSettings {
		cfg.RuntimeParams[k] = v
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, s.unreachable(err)
	}
	return c, nil
}

// unreachable is a failed connection in the words a user acts on.
func (s *pgServer) unreachable(err error) error {
	what := "does not answer"
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "28"):
			what = "refused the login"
		case pgErr.Code == "3D000":
			what = "has no such database"
		default:
			what = "refused the connection"
		}
	}
	return fmt.Errorf("%w: postgres %s (%s) %s: %w; check --postgres-url (%s)",
		ErrPostgresUnreachable, s.addr, s.cfg.User, what, err, urlHint)
}

// check proves the server can take a cell: it answers, takes writes, the
// role may create schemas, and the sessions may set what the tuned locks
// set. It returns the server's version.
func (s *pgServer) check(ctx context.Context) (string, error) {
	c, err := s.connect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close(context.Background())
	var user, db, version string
	var num int
	var canCreate, standby bool
	err = c.QueryRow(ctx, "SELECT current_user, current_database(), current_setting('server_version'), "+
		"current_setting('server_version_num')::int, has_database_privilege(current_database(), 'CREATE'), "+
		"pg_is_in_recovery()").Scan(&user, &db, &version, &num, &canCreate, &standby)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: postgres %s: %w", ErrPostgresRights, s.addr, err)
	case num < 140000:
		// idle_session_timeout, what pg-advisory-tuned sets, came in 14.
		return "", fmt.Errorf("%w: postgres %s is version %s: the harness needs 14 or later", ErrPostgresRights, s.addr, version)
	case standby:
		return "", fmt.Errorf("%w: postgres %s is a standby (read-only): give the primary's address", ErrPostgresRights, s.addr)
	case !canCreate:
		return "", fmt.Errorf("%w: role %q may not create schemas in database %q: run GRANT CREATE ON DATABASE %s TO %s "+
			"(each cell works in a schema of its own, %s<n>, dropped when it ends)",
			ErrPostgresRights, user, db, pgx.Identifier{db}.Sanitize(), pgx.Identifier{user}.Sanitize(), SchemaPrefix)
	}
	// The settings the tuned locks make per session: a role or server
	// that refuses one is told now, not by every cell.
	if _, err := c.Exec(ctx, "BEGIN; SET LOCAL idle_in_transaction_session_timeout = '1s'; "+
		"SET LOCAL idle_session_timeout = '1s'; SET LOCAL tcp_keepalives_idle = 1; SET LOCAL tcp_keepalives_interval = 1; "+
		"SET LOCAL tcp_keepalives_count = 2; ROLLBACK"); err != nil {
		return "", fmt.Errorf("%w: postgres %s refuses a session setting the tuned locks make: %w", ErrPostgresRights, s.addr, err)
	}
	return version, nil
}

// pgNode is the user's server as a cell's one node.
type pgNode struct {
	name string
	s    *pgServer
}

var (
	_ backend.ResourceNode   = (*pgNode)(nil)
	_ backend.ObservableNode = (*pgNode)(nil)
)

// Name implements backend.RedisNode.
func (n *pgNode) Name() string { return n.name }

// Addr implements backend.RedisNode.
func (n *pgNode) Addr() string { return n.s.addr }

// State implements backend.RedisNode: running, as far as we know.
func (n *pgNode) State() backend.NodeState { return backend.NodeRunning }

// Kill and the rest of node control: not on a user's server.
func (n *pgNode) Kill() error                   { return ErrNoNodeControl }
func (n *pgNode) Start(context.Context) error   { return ErrNoNodeControl }
func (n *pgNode) Restart(context.Context) error { return ErrNoNodeControl }
func (n *pgNode) Pause() error                  { return ErrNoNodeControl }
func (n *pgNode) Resume() error                 { return ErrNoNodeControl }

// Close implements backend.RedisNode: the server is the user's.
func (n *pgNode) Close() error { return nil }

// Do and the other Redis commands: a PostgreSQL server answers none.
func (n *pgNode) Do(context.Context, ...any) (any, error) { return nil, n.notRedis() }
func (n *pgNode) ReplicaOf(context.Context, string) error { return n.notRedis() }
func (n *pgNode) Promote(context.Context) error           { return n.notRedis() }
func (n *pgNode) ReplicationInfo(context.Context) (map[string]string, error) {
	return nil, n.notRedis()
}
func (n *pgNode) WaitLinkUp(context.Context, time.Duration) error { return n.notRedis() }

func (n *pgNode) notRedis() error {
	return fmt.Errorf("external postgres %s: a PostgreSQL server does not answer Redis commands: %w", n.name, backend.ErrUnsupported)
}

// ResetResource implements backend.ResourceNode: the cell's resource
// table, in its schema, emptied.
func (n *pgNode) ResetResource(ctx context.Context, keyPrefix string) error {
	schema, err := SchemaFor(keyPrefix)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := n.s.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, "DELETE FROM "+pgx.Identifier{schema, resourceTable}.Sanitize())
	return err
}

// ObserveKeys implements backend.ObservableNode: the witness watches the
// servers the harness starts (their lock tables through pgrowlocks, their
// log); on a user's it says once that it sees nothing, so every lease end
// there is assumed, and says so.
func (n *pgNode) ObserveKeys(_ func(string) bool, sink func(backend.KeyChange)) (stop func()) {
	sink(backend.KeyChange{Node: n.name, Op: backend.Blind, At: time.Now(),
		Reason: "the witness does not watch a PostgreSQL server the harness did not start (--postgres-url)"})
	return func() {}
}
