// Package drivers runs locks written in any language: one driver process
// per pod, speaking JSON lines (docs/driver-protocol.md). A driver lock is
// a lockimpl.Spec like any other; a pause of its pod stops the driver's
// whole process group (SIGSTOP), so every thread of the lock freezes and
// replies wait in the kernel, as when a real process stops.
package drivers

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/lockchaos/lockchaos/lockimpl"
	"github.com/lockchaos/lockchaos/service"
)

// Version is the protocol version this harness speaks.
const Version = 1

// ErrInvalid means a driver declaration cannot work.
var ErrInvalid = errors.New("drivers: invalid driver")

// Driver declares a lock served by a driver process, with its traits.
type Driver struct {
	Name string `yaml:"name" json:"name"`
	Doc  string `yaml:"doc,omitempty" json:"doc,omitempty"`
	// Command runs with sh -c; a simple one is exec'd after its leading
	// VAR=value assignments (docs/driver-protocol.md, Start).
	Command string `yaml:"command" json:"command"`
	// Nodes the lock needs: 1 (default) for one service address, N > 1
	// for independent primaries (Redis only).
	Nodes int `yaml:"nodes,omitempty" json:"nodes,omitempty"`
	// Service is the lock service the driver's lock talks to: redis (the
	// default) or postgres. The driver gets its servers' addresses in
	// LOCKCHAOS_ADDRS (and, for PostgreSQL, connection URLs in
	// LOCKCHAOS_POSTGRES_URLS).
	Service     string `yaml:"service,omitempty" json:"service,omitempty"`
	Fencing     bool   `yaml:"fencing,omitempty" json:"fencing,omitempty"`
	Renews      bool   `yaml:"renews,omitempty" json:"renews,omitempty"`
	SignalsLoss bool   `yaml:"signals_loss,omitempty" json:"signals_loss,omitempty"`
	// Lease is how long the lease the driver's lock takes lasts, in the
	// cell's TTLs, as lockimpl.Spec.Lease: 0 for one TTL (a driver that
	// passes LOCKCHAOS_TTL_MS to its lock), more for a lock with a lease
	// of its own (a library that rounds up to whole seconds), negative for
	// a key that never expires. The margins' theory reads it; the checker
	// judges by what the witness saw the server hold.
	Lease float64 `yaml:"lease,omitempty" json:"lease,omitempty"`
}

// Parse reads a --lock-driver value, NAME=COMMAND.
func Parse(v string) (Driver, error) {
	name, cmd, ok := strings.Cut(v, "=")
	d := Driver{Name: strings.TrimSpace(name), Command: strings.TrimSpace(cmd)}
	if !ok {
		return d, fmt.Errorf("%w: --lock-driver %q: want NAME=COMMAND, e.g. pylock='python3 driver.py'", ErrInvalid, v)
	}
	if err := d.Validate(); err != nil {
		return d, fmt.Errorf("--lock-driver %q: %w", v, err)
	}
	return d, nil
}

// Validate reports a declaration that cannot work.
func (d Driver) Validate() error {
	switch {
	case d.Command == "":
		return fmt.Errorf("%w: lock %q has no command", ErrInvalid, d.Name)
	case d.Nodes < 0:
		return fmt.Errorf("%w: lock %q: negative nodes", ErrInvalid, d.Name)
	case math.IsNaN(d.Lease) || math.IsInf(d.Lease, 0):
		return fmt.Errorf("%w: lock %q: lease %v is not a number of TTLs", ErrInvalid, d.Name, d.Lease)
	case d.Nodes > 1 && !service.Name(d.Service).IsRedis():
		return fmt.Errorf("%w: lock %q: %d nodes: independent nodes are Redis's (Redlock); %s runs one server",
			ErrInvalid, d.Name, d.Nodes, d.Service)
	}
	if err := service.Name(d.Service).Validate(); err != nil {
		return fmt.Errorf("%w: lock %q: %w", ErrInvalid, d.Name, err)
	}
	return d.Spec().Validate()
}

// Spec is the driver lock as the harness sees every lock.
func (d Driver) Spec() lockimpl.Spec {
	doc := d.Doc
	if doc == "" {
		doc = "driver process: " + d.Command
	}
	return lockimpl.Spec{Name: d.Name, Doc: doc, Service: service.Name(d.Service), Nodes: max(d.Nodes, 1),
		Fencing: d.Fencing, Renews: d.Renews,
		SignalsLoss: d.SignalsLoss, Lease: d.Lease, BringsClient: true, OutOfProcess: true,
		New: func(env lockimpl.Env) (lockimpl.Locker, error) { return start(d, env) }}
}
