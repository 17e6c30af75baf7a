package backendtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/service"
	"github.com/lockchaos/lockchaos/service/postgres"
)

// UserPostgres starts a PostgreSQL server set up as a user's would be for
// --postgres-url: a role "app" that is no superuser and may create schemas
// in database "appdb" and nothing more, a role "norights" that may not,
// and the user's own table public.orders with 10 rows. It returns the URL
// of app (and of norights), and a superuser's URL to look with; the
// server stops with the test. It skips when PostgreSQL is not installed.
func UserPostgres(t testing.TB) (appURL, norightsURL, adminURL string) {
	t.Helper()
	if _, err := postgres.Find(); err != nil {
		t.Skip(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := postgres.Start(ctx, backend.NodeConfig{Name: "user", Service: service.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	Exec(t, n.URL(), "CREATE ROLE app LOGIN", "CREATE ROLE norights LOGIN", "CREATE DATABASE appdb",
		"GRANT CREATE ON DATABASE appdb TO app")
	u, _ := url.Parse(n.URL())
	u.Path = "/appdb"
	adminURL = u.String()
	Exec(t, adminURL, "CREATE TABLE public.orders(id int PRIMARY KEY, v int)",
		"INSERT INTO public.orders SELECT g, g FROM generate_series(1, 10) g")
	user := func(role string) string {
		return fmt.Sprintf("postgres://%s@%s/appdb?sslmode=disable", role, n.Addr())
	}
	return user("app"), user("norights"), adminURL
}

// Exec runs each statement on its own at url, failing the test on an error.
func Exec(t testing.TB, url string, stmts ...string) {
	t.Helper()
	withConn(t, url, func(ctx context.Context, c *pgx.Conn) {
		for _, s := range stmts {
			if _, err := c.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	})
}

// Query returns the first column of every row of sql at url, one line each.
func Query(t testing.TB, url, sql string) (out string) {
	t.Helper()
	withConn(t, url, func(ctx context.Context, c *pgx.Conn) {
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		out = strings.Join(lines, "\n")
	})
	return out
}

// withConn runs fn on a connection to url, closed after, within 30 s.
func withConn(t testing.TB, url string, fn func(context.Context, *pgx.Conn)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	fn(ctx, c)
}

// UserObjects is what the user has outside the harness's schemas, to
// compare before and after a run: every schema and relation, the user's
// table's rows, and the server's counts of rows written to it.
func UserObjects(t testing.TB, adminURL string) string {
	t.Helper()
	// Statistics reach the views asynchronously; a fresh snapshot each
	// time.
	Exec(t, adminURL, "SELECT pg_stat_clear_snapshot()")
	return Query(t, adminURL, `SELECT n.nspname || '.' || coalesce(c.relname, '') || ' ' || coalesce(c.relkind::text, '')
		FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid
		WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'lockchaos\_%'
		UNION ALL SELECT 'orders ' || string_agg(id || '=' || v, ',' ORDER BY id) FROM public.orders
		UNION ALL SELECT 'stats ' || concat_ws(' ', n_tup_ins, n_tup_upd, n_tup_del) FROM pg_stat_user_tables WHERE relname = 'orders'
		ORDER BY 1`)
}
