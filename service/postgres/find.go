// Package postgres is the PostgreSQL server as lockchaos runs it: one
// postgres process per node on a loopback port, in a folder of its own
// under a run folder a janitor removes, copied from a cluster initdb made
// once per harness process, with the schema the PostgreSQL locks use. A
// *Node is a backend.RedisNode (kill, start, pause, close) and a
// backend.ObservableNode (a witness that polls the server's locks).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sentinel errors; the wrapping error says which node or path and why.
var (
	// ErrNoPostgres means no PostgreSQL server binaries (initdb and
	// postgres) were found; the error says how to get them.
	ErrNoPostgres = errors.New("postgres: no PostgreSQL server found")
	// ErrNoServerUser means lockchaos runs as root, postgres refuses to,
	// and there is no unprivileged user to run it as.
	ErrNoServerUser = errors.New("postgres: no user to run the server as")
)

// BinEnv names the environment variable that points at a folder holding
// initdb and postgres.
const BinEnv = "LOCKCHAOS_POSTGRES_BIN"

// UserEnv names the environment variable that says which user runs the
// server when lockchaos runs as root (default "postgres", else "nobody").
const UserEnv = "LOCKCHAOS_POSTGRES_USER"

const howToGet = "install it (Debian/Ubuntu: apt-get install postgresql) " +
	"or set " + BinEnv + " to the folder holding initdb and postgres"

// Find returns the folder holding initdb and postgres: LOCKCHAOS_POSTGRES_BIN
// when set (an explicit choice beats a guess, and a wrong one is an error,
// not a silent fallback), else the one on PATH, else the newest
// /usr/lib/postgresql/<version>/bin (where Debian puts them, off PATH).
func Find() (string, error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		return FindIn(dir)
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		if dir, err := FindIn(filepath.Dir(p)); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return pgVersion(b) - pgVersion(a) })
	for _, dir := range dirs {
		if d, err := FindIn(dir); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w: not on PATH, not in /usr/lib/postgresql/*/bin, %s unset: %s",
		ErrNoPostgres, BinEnv, howToGet)
}

// FindIn checks that dir (or the folder of dir, when dir is the postgres
// binary itself) holds executable initdb and postgres, and returns it.
func FindIn(dir string) (string, error) {
	if filepath.Base(dir) == "postgres" {
		if st, err := os.Stat(dir); err == nil && !st.IsDir() {
			dir = filepath.Dir(dir)
		}
	}
	for _, name := range []string{"initdb", "postgres"} {
		p := filepath.Join(dir, name)
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: no executable %s in %s: %s", ErrNoPostgres, name, dir, howToGet)
		}
	}
	return dir, nil
}

// pgVersion is the major version in /usr/lib/postgresql/<v>/bin, 0 if none.
func pgVersion(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// serverUser is who runs initdb and postgres: nil (this process's own
// user) unless this process is root, which postgres refuses ("root"
// execution of the PostgreSQL server is not permitted"). As root the
// server runs as LOCKCHAOS_POSTGRES_USER, else the "postgres" system user
// the Debian package creates, else "nobody"; the node folders are
// chowned to it.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	names := []string{"postgres", "nobody"}
	if name := os.Getenv(UserEnv); name != "" {
		names = []string{name}
	}
	for _, name := range names {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("%w: lockchaos runs as root and PostgreSQL refuses to run as root; "+
		"it runs the server as an unprivileged user instead, but none of %s exists "+
		"(create one: useradd --system postgres, or set %s to an existing non-root user)",
		ErrNoServerUser, strings.Join(names, ", "), UserEnv)
}

// Check says whether this machine can run a node: nil, or the error
// Start would give (ErrNoPostgres, or ErrNoServerUser as root), whose
// words say what to install or set. For a backend's Supports.
func Check() error {
	if _, err := Find(); err != nil {
		return err
	}
	_, err := serverUser()
	return err
}

// Version is what `postgres --version` of the server Find chooses says
// ("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"), for reports.
func Version() (string, error) {
	dir, err := Find()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s --version: %w", ErrNoPostgres, filepath.Join(dir, "postgres"), err)
	}
	return strings.TrimSpace(string(out)), nil
}
