package lockimpl

import (
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The built-in lock names, in the order reports show them.
const (
	NameMutex         = "mutex"
	NameNaive         = "naive"
	NameToken         = "token"
	NameTokenWatchdog = "token-watchdog"
	NameRedlock       = "redlock"
	NameFenced        = "fenced"
)

// Names lists every built-in lock.
func Names() []string {
	return []string{NameMutex, NameNaive, NameToken, NameTokenWatchdog, NameRedlock, NameFenced}
}

// Options are the settings New passes on; zero values mean each lock's
// documented default.
type Options struct {
	TTL              time.Duration
	WatchdogInterval time.Duration
	OnRenew          func(Renewal)
	Redlock          RedlockConfig // TTL here is ignored: Options.TTL wins
}

// NodesNeeded reports how many independent nodes the named lock uses:
// 0 for mutex, the Redlock default (3) for redlock, else 1.
func NodesNeeded(name string) (int, error) {
	switch name {
	case NameMutex:
		return 0, nil
	case NameRedlock:
		return 3, nil
	case NameNaive, NameToken, NameTokenWatchdog, NameFenced:
		return 1, nil
	}
	return 0, unknown(name)
}

// New builds the named lock for one simulated pod over that pod's clients,
// one per node (only redlock uses more than the first).
func New(name string, nodes []redis.UniversalClient, opts Options) (Locker, error) {
	need, err := NodesNeeded(name)
	if err != nil {
		return nil, err
	}
	if need > 0 && len(nodes) == 0 {
		return nil, fmt.Errorf("%w: %s needs a Redis client, got none", ErrInvalidConfig, name)
	}
	switch name {
	case NameMutex:
		return NewMutex(MutexConfig{}), nil
	case NameNaive:
		return NewNaive(nodes[0], NaiveConfig{TTL: opts.TTL})
	case NameToken:
		return NewToken(nodes[0], TokenConfig{TTL: opts.TTL})
	case NameTokenWatchdog:
		tok, err := NewToken(nodes[0], TokenConfig{TTL: opts.TTL})
		if err != nil {
			return nil, err
		}
		return NewTokenWatchdog(tok, WatchdogConfig{TTL: opts.TTL, Interval: opts.WatchdogInterval, OnRenew: opts.OnRenew})
	case NameRedlock:
		cfg := opts.Redlock
		cfg.TTL = opts.TTL
		return NewRedlock(nodes, cfg)
	case NameFenced:
		return NewFenced(nodes[0], FencedConfig{TTL: opts.TTL})
	}
	return nil, unknown(name)
}

func unknown(name string) error {
	return fmt.Errorf("%w %q (valid: %s)", ErrUnknownLock, name, strings.Join(Names(), ", "))
}
