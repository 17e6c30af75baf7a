package external_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/backend/backendtest"
	"github.com/lockchaos/lockchaos/backend/external"
	"github.com/lockchaos/lockchaos/service"
)

// TestPostgresSweep: a run begins by dropping the schemas of runs that
// were killed (their owner marker, an advisory lock of their session, is
// free), and leaves a live run's schema and every schema not the
// harness's alone: one of another name, one of the harness's name it did
// not make (no tag), one another role made.
func TestPostgresSweep(t *testing.T) {
	app, _, admin := backendtest.UserPostgres(t)
	tag := func(s string) string { return "COMMENT ON SCHEMA " + s + " IS '" + external.SchemaTag + "'" }
	backendtest.Exec(t, app, "CREATE SCHEMA lockchaos_123", "CREATE TABLE lockchaos_123.t(x int)", tag("lockchaos_123"),
		"CREATE SCHEMA lockchaos_m456", tag("lockchaos_m456"), "CREATE SCHEMA lockchaos_app", "CREATE SCHEMA lockchaos_2024")
	backendtest.Exec(t, admin, "CREATE SCHEMA lockchaos_77", tag("lockchaos_77"))
	live, err := pgx.Connect(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close(ctx)
	if _, err := live.Exec(ctx, "SELECT pg_advisory_lock($1, 0)", external.ClassFor("lockchaos_m456")); err != nil {
		t.Fatal(err)
	}
	b, err := external.New(external.Config{PostgresURL: app})
	if err != nil {
		t.Fatal(err)
	}
	if b.Swept != 1 {
		t.Errorf("swept %d schemas, want 1 (lockchaos_123)", b.Swept)
	}
	got := backendtest.Query(t, admin, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lockchaos%' ORDER BY 1")
	if want := "lockchaos_2024\nlockchaos_77\nlockchaos_app\nlockchaos_m456"; got != want {
		t.Errorf("schemas after the sweep:\n%s\nwant:\n%s", got, want)
	}
}

// TestPostgresClaim: a cell's schema is made with the locks' tables when
// it begins and dropped when it ends; a second claim of the same cell
// while the first holds it is refused.
func TestPostgresClaim(t *testing.T) {
	app, _, admin := backendtest.UserPostgres(t)
	b, err := external.New(external.Config{PostgresURL: app})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.StartNode(ctx, backend.NodeConfig{Name: "node0", Service: service.Postgres})
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "lockchaos:-42:"
	release, err := b.Claim(prefix, []string{n.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	tables := "SELECT table_name FROM information_schema.tables WHERE table_schema = 'lockchaos_m42' ORDER BY 1"
	if got := backendtest.Query(t, admin, tables); got != "lockchaos_locks\nlockchaos_resource" {
		t.Errorf("tables in the cell's schema: %q", got)
	}
	if _, err := b.Claim(prefix, []string{n.Addr()}); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Errorf("a second claim of a held cell: %v, want refused", err)
	}
	backendtest.Exec(t, app, "CREATE SCHEMA lockchaos_5")
	if _, err := b.Claim("lockchaos:5:", []string{n.Addr()}); err == nil || !strings.Contains(err.Error(), "not the harness's") {
		t.Errorf("a claim over a schema the harness did not make: %v, want refused", err)
	}
	target, err := b.PostgresTarget(prefix)
	if err != nil || target.Schema != "lockchaos_m42" || target.AdvisoryClass != external.ClassFor("lockchaos_m42") {
		t.Errorf("target %+v, %v", target, err)
	}
	release()
	if got := backendtest.Query(t, admin, "SELECT count(*)::text FROM pg_namespace WHERE nspname = 'lockchaos_m42'"); got != "0" {
		t.Errorf("the cell's schema outlived its release")
	}
}

// TestPostgresBadInput: every way --postgres-url can be wrong gives one
// error that says what to do, of the kind the CLI maps to its exit code.
func TestPostgresBadInput(t *testing.T) {
	_, norights, _ := backendtest.UserPostgres(t)
	for _, c := range []struct {
		url  string
		want error
		says string
	}{
		{"host=127.0.0.1 user=app", backend.ErrInvalidConfig, "not a postgres:// URL"},
		{"postgres://app@127.0.0.1:notaport/appdb", backend.ErrInvalidConfig, "want postgres://USER@HOST:PORT/DATABASE"},
		{"postgres://app@/appdb?host=/tmp", backend.ErrInvalidConfig, "Unix socket"},
		{"postgres://app:pw@127.0.0.1:1/appdb?connect_timeout=2", external.ErrPostgresUnreachable, "does not answer"},
		{"postgres://app:pw@127.0.0.1:1,127.0.0.2:1/appdb", backend.ErrInvalidConfig, "names several hosts"},
		{norights, external.ErrPostgresRights, "GRANT CREATE ON DATABASE"},
		{strings.Replace(norights, "/appdb", "/nosuchdb", 1), external.ErrPostgresUnreachable, "has no such database"},
	} {
		_, err := external.New(external.Config{PostgresURL: c.url})
		if !errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.says) {
			t.Errorf("%s: %v\nwant %v saying %q", c.url, err, c.want, c.says)
		}
		if strings.Contains(fmt.Sprint(err), ":pw@") {
			t.Errorf("%s: the error shows the password: %v", c.url, err)
		}
	}
}

// TestRedact: a password is masked wherever it is given, and a rerun's
// URL has none at all (a masked one would be sent as it is).
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:s3cret@db:5432/x":                                  "postgres://app:xxxxx@db:5432/x",
		"postgres://app@db:5432/x":                                         "postgres://app@db:5432/x",
		"postgres://app:s3cret@db:notaport/x":                              "postgres://app:xxxxx@db:notaport/x",
		"lockchaos run --postgres-url postgres://db:5432/x a@b":            "lockchaos run --postgres-url postgres://db:5432/x a@b",
		"host=db password=s3cret user=app":                                 "host=db password=xxxxx user=app",
		"host=db password='s3 cret' user=app":                              "host=db password='xxxxx' user=app",
		"postgres://app:pa/ss@h/db":                                        "postgres://app:xxxxx@h/db",
		"postgres://app:p@ss@h/db":                                         "postgres://app:xxxxx@h/db",
		"x 'postgres://app@h/db?password=s3cret&sslmode=require' --seed 1": "x 'postgres://app@h/db?password=xxxxx&sslmode=require' --seed 1",
	} {
		if got := external.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"postgres://app:s3cret@db:5432/x?sslmode=require":          "postgres://app@db:5432/x?sslmode=require",
		"postgres://app@db:5432/x?password=s3cret&sslmode=disable": "postgres://app@db:5432/x?sslmode=disable",
	} {
		if got := external.WithoutPassword(in); got != want {
			t.Errorf("WithoutPassword(%q) = %q, want %q", in, got, want)
		}
	}
}
