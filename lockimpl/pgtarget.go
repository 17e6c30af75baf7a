package lockimpl

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// PGTarget is where a PostgreSQL lock's objects live on its server. The
// zero value is a server the harness started: service/postgres's role
// and database, the public schema, PGAdvisoryClass. On a user's server
// (--postgres-url) every cell gets a schema and an advisory class of its
// own, so nothing of the user's is read or written and two cells' locks
// never meet.
type PGTarget struct {
	// URL is the user's connection URL (credentials, database, TLS); ""
	// for the harness's own server. Its host and port are not dialled:
	// the pod's proxy for that server is (Env.Addrs), so faults apply.
	URL string
	// Schema is the cell's schema, first on every session's search_path
	// ("" for the server's default).
	Schema string
	// AdvisoryClass is the first key of the cell's advisory locks (0:
	// PGAdvisoryClass).
	AdvisoryClass int32
	// Session are settings every lock session sets as it connects (the
	// tuned locks' timeouts: on a server the harness did not start they
	// cannot be on its command line).
	Session map[string]string
}

// Class is the target's advisory class: the first key of its two-int
// advisory locks.
func (t PGTarget) Class() int32 {
	if t.AdvisoryClass == 0 {
		return PGAdvisoryClass
	}
	return t.AdvisoryClass
}

// params are the runtime parameters a lock session sends at connect.
func (t PGTarget) params() map[string]string {
	p := maps.Clone(t.Session)
	if p == nil {
		p = map[string]string{}
	}
	p["application_name"] = "lockchaos"
	if t.Schema != "" {
		p["search_path"] = t.Schema
	}
	return p
}

// withSession returns t with settings added to its session's.
func (t PGTarget) withSession(settings map[string]string) PGTarget {
	s := maps.Clone(t.Session)
	if s == nil {
		s = map[string]string{}
	}
	maps.Copy(s, settings)
	t.Session = s
	return t
}

// sessionSettings turns a server command line of "-c name=value" pairs
// (Spec.ServerArgs) into session settings.
func sessionSettings(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(args); i += 2 {
		if args[i] != "-c" {
			continue
		}
		if k, v, ok := strings.Cut(args[i+1], "="); ok {
			out[k] = v
		}
	}
	return out
}

// ConnectPostgres opens a session to the server at addr (a proxy) as the
// locks do for target (TLS naming the user's host), for the harness's own
// round trips (calibration's SELECT 1).
func ConnectPostgres(ctx context.Context, addr string, target PGTarget) (*pgx.Conn, error) {
	cfg, err := pgConnConfig(addr, defaultPGCallTimeout, nil, target)
	if err != nil {
		return nil, err
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// url is the URL of the server at addr (a pod's proxy) as the target
// connects: the user's credentials and database, or service/postgres's,
// with the session's settings in "options" (what a driver's client, libpq
// or another, reads).
func (t PGTarget) url(addr string) string {
	u := &url.URL{Scheme: "postgres", User: url.User(PGUser), Host: addr, Path: "/" + PGDatabase}
	q := url.Values{"sslmode": {"disable"}}
	if t.URL != "" {
		if parsed, err := url.Parse(t.URL); err == nil {
			u, q = parsed, parsed.Query()
			u.Host = addr
		}
	}
	p := t.params()
	var opts []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if k == "application_name" {
			continue
		}
		opts = append(opts, fmt.Sprintf("-c %s=%s", k, p[k]))
	}
	if len(opts) > 0 {
		q.Set("options", strings.Join(opts, " "))
	}
	// Encode writes a space as "+", which neither libpq nor pgx reads
	// back as one in a URL's query ("+search_path" was refused).
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}
