package lockimpl

import (
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPGTargetURL: a driver's URL keeps the user's credentials and
// database, goes to the pod's proxy, and carries the cell's schema and the
// tuned settings as session options; the harness's own server's keeps
// service/postgres's role and database.
func TestPGTargetURL(t *testing.T) {
	t0 := PGTarget{}.withSession(sessionSettings(pgTunedArgs("idle_session_timeout")(300 * time.Millisecond)))
	u, err := url.Parse(t0.url("127.0.0.1:7000"))
	if err != nil {
		t.Fatal(err)
	}
	if u.User.Username() != PGUser || u.Path != "/"+PGDatabase || u.Host != "127.0.0.1:7000" || u.Query().Get("sslmode") != "disable" {
		t.Errorf("own server: %s", u)
	}
	want := "-c idle_session_timeout=300ms -c tcp_keepalives_count=2 -c tcp_keepalives_idle=1 -c tcp_keepalives_interval=1"
	if got := u.Query().Get("options"); got != want {
		t.Errorf("options %q, want %q", got, want)
	}
	t1 := PGTarget{URL: "postgres://app:pw@db.example:5432/billing?sslmode=require", Schema: "lockchaos_7", AdvisoryClass: 9}
	u, err = url.Parse(t1.url("127.0.0.1:7001"))
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := u.User.Password(); u.User.Username() != "app" || pw != "pw" || u.Path != "/billing" || u.Host != "127.0.0.1:7001" ||
		u.Query().Get("sslmode") != "require" || u.Query().Get("options") != "-c search_path=lockchaos_7" {
		t.Errorf("user's server: %s", u)
	}
	// As a driver's client reads it: pgx (libpq alike) does not read a
	// "+" in a query as a space.
	cfg, err := pgx.ParseConfig(t1.url("127.0.0.1:7001"))
	if err != nil || cfg.RuntimeParams["options"] != "-c search_path=lockchaos_7" {
		t.Errorf("pgx reads options %q (%v)", cfg.RuntimeParams["options"], err)
	}
	if t1.Class() != 9 || (PGTarget{}).Class() != PGAdvisoryClass {
		t.Errorf("classes %d, %d", t1.Class(), PGTarget{}.Class())
	}
}
