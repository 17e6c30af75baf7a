package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/lockchaos/lockchaos/internal/probe"
)

// RedisServerEnv names the environment variable that overrides where the
// redis-server binary is taken from.
const RedisServerEnv = "LOCKCHAOS_REDIS_SERVER"

// versionTimeout bounds redis-server --version, which answers in
// milliseconds: a binary silent that long is not a redis-server that works
// (a wrapper script stuck on a lock, a binary waiting on a terminal). A
// variable for the tests.
var versionTimeout = 10 * time.Second

// installHint is appended to every "not found" error: the person reading it
// is usually a newcomer on a fresh machine, so it says how to get going.
const installHint = `install it with "apt-get install redis-server" (Debian/Ubuntu) or ` +
	`"brew install redis" (macOS), or point ` + RedisServerEnv + ` at a redis-server binary; ` +
	`with Docker available, the docker backend runs Redis in containers instead`

// explicitHint ends the error of a LOCKCHAOS_REDIS_SERVER that does not
// work: the variable was set on purpose, so nothing falls back to another
// redis-server or to Docker; it says what to change.
const explicitHint = `is set, so it must name a working redis-server binary (nothing falls back): fix it, or unset it to take ` +
	`redis-server from PATH (install it with "apt-get install redis-server" on Debian/Ubuntu or ` +
	`"brew install redis" on macOS), or run Redis in Docker with --backend docker`

// FindRedisServer returns the path of the redis-server binary: the one named
// by LOCKCHAOS_REDIS_SERVER when set (an error, never a fallback, when that
// is no executable file), else the first on PATH.
func FindRedisServer() (string, error) {
	p, explicit := explicitRedisServer()
	if explicit {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("%w: %s=%q: %w; %s %s", ErrNoRedisServer, RedisServerEnv, p, err, RedisServerEnv, explicitHint)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s=%q is not an executable file; %s %s",
				ErrNoRedisServer, RedisServerEnv, p, RedisServerEnv, explicitHint)
		}
		return p, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("%w on PATH; %s", ErrNoRedisServer, installHint)
	}
	return p, nil
}

// ExplicitRedisServer reports whether LOCKCHAOS_REDIS_SERVER is set: the
// user chose a binary, and what fails with it is an error, not a reason to
// run Redis some other way.
func ExplicitRedisServer() bool {
	_, explicit := explicitRedisServer()
	return explicit
}

func explicitRedisServer() (string, bool) {
	p := strings.TrimSpace(os.Getenv(RedisServerEnv))
	return p, p != ""
}

// RedisServerVersion returns the version string redis-server reports
// (for example "7.0.15"), for reports and error messages. The binary gets
// ten seconds to answer --version, and ends with ctx (an interrupt):
// either way it is killed with every process it started
// (ErrRedisServerBroken).
func RedisServerVersion(ctx context.Context, binary string) (string, error) {
	who := binary
	if p, explicit := explicitRedisServer(); explicit && p == binary {
		who = RedisServerEnv + "=" + binary
	}
	out, err := probe.Output(ctx, versionTimeout, who, binary, "--version")
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("process: %w", err)
		}
		return "", fmt.Errorf("%w: %w; %s", ErrRedisServerBroken, err, brokenHint(who))
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v, nil
		}
	}
	return strings.TrimSpace(string(out)), nil
}

// brokenHint says what to do about a redis-server that does not answer.
func brokenHint(who string) string {
	if strings.HasPrefix(who, RedisServerEnv+"=") {
		return RedisServerEnv + " " + explicitHint
	}
	return `reinstall it ("apt-get install --reinstall redis-server" or "brew reinstall redis"), ` +
		`or point ` + RedisServerEnv + ` at a working redis-server binary`
}
