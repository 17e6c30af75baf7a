package process

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// RedisServerEnv names the environment variable that overrides where the
// redis-server binary is taken from.
const RedisServerEnv = "LOCKCHAOS_REDIS_SERVER"

// installHint is appended to every "not found" error: the person reading it
// is usually a newcomer on a fresh machine, so it says how to get going.
const installHint = `install it with "apt-get install redis-server" (Debian/Ubuntu) or ` +
	`"brew install redis" (macOS), or point ` + RedisServerEnv + ` at a redis-server binary; ` +
	`with Docker available, the docker backend runs Redis in containers instead`

// FindRedisServer returns the path of the redis-server binary: the one named
// by LOCKCHAOS_REDIS_SERVER when set, else the first on PATH.
func FindRedisServer() (string, error) {
	if p := strings.TrimSpace(os.Getenv(RedisServerEnv)); p != "" {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("%w: %s=%q: %w; %s", ErrNoRedisServer, RedisServerEnv, p, err, installHint)
		}
		if st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s=%q is not an executable file; %s", ErrNoRedisServer, RedisServerEnv, p, installHint)
		}
		return p, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("%w on PATH; %s", ErrNoRedisServer, installHint)
	}
	return p, nil
}

// RedisServerVersion returns the version string redis-server reports
// (for example "7.0.15"), for reports and error messages.
func RedisServerVersion(binary string) (string, error) {
	out, err := exec.Command(binary, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("process: %s --version: %w", binary, err)
	}
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v, nil
		}
	}
	return strings.TrimSpace(string(out)), nil
}
