package workload

import (
	"errors"
	"fmt"
	"sync"
)

// ErrStaleFence is returned (definite: nothing happened) when the resource
// rejects a request whose fence is below the highest it has seen for the key.
var ErrStaleFence = errors.New("workload: stale fence")

// FenceMode says which requests the protected resource checks fences on.
type FenceMode string

// Fence modes.
//
// Checking writes alone is the common half-measure and still loses
// updates: holder A (fence 5) reads 17 and pauses; its lease expires;
// B (fence 6) reads 17; A wakes and writes 18 (5 is the highest fence
// *written* so far, so it is accepted); B writes 18 too (6 > 5). One
// increment is lost. Checking reads as well closes the gap: B's read raises
// the key's highest fence to 6, so A's later write with 5 is rejected. In a
// read-modify-write the read is part of the critical section and must be
// fenced like the write.
const (
	FenceOff            FenceMode = "off"
	FenceWrites         FenceMode = "writes"
	FenceReadsAndWrites FenceMode = "reads-and-writes"
	// FenceTransaction: the resource lives in the lock's own transaction
	// (lockimpl.TxLease): the database, not this Resource, holds it, and
	// a write commits only while the lock's session lives.
	FenceTransaction FenceMode = "transaction"
)

// FenceModes lists the valid modes.
var FenceModes = []FenceMode{FenceOff, FenceWrites, FenceReadsAndWrites, FenceTransaction}

// Validate reports an unknown mode.
func (m FenceMode) Validate() error {
	switch m {
	case FenceOff, FenceWrites, FenceReadsAndWrites, FenceTransaction, "":
		return nil
	}
	return fmt.Errorf("%w: unknown fence mode %q (valid: %v)", ErrInvalidConfig, string(m), FenceModes)
}

// Resource stands in for the database a lock protects: an in-process,
// linearizable (one mutex) map of counters. Reads and writes are separate
// calls so a critical section is read, work, write(v+1), and two
// overlapping holders produce a visible lost update.
type Resource struct {
	mode FenceMode

	mu      sync.Mutex
	values  map[string]int64
	highest map[string]uint64
}

// NewResource returns an empty resource (every key reads 0).
func NewResource(mode FenceMode) *Resource {
	if mode == "" {
		mode = FenceOff
	}
	return &Resource{mode: mode, values: map[string]int64{}, highest: map[string]uint64{}}
}

// Mode returns the resource's fence mode.
func (r *Resource) Mode() FenceMode { return r.mode }

// Read returns the key's value. In reads-and-writes mode a fence below the
// key's highest is rejected, and an accepted fence raises the highest.
func (r *Resource) Read(key string, fence uint64) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode == FenceReadsAndWrites {
		if err := r.admit(key, fence); err != nil {
			return 0, err
		}
	}
	return r.values[key], nil
}

// Write stores value. In either fencing mode a fence below the key's
// highest is rejected, and an accepted fence raises the highest.
func (r *Resource) Write(key string, value int64, fence uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mode != FenceOff {
		if err := r.admit(key, fence); err != nil {
			return err
		}
	}
	r.values[key] = value
	return nil
}

// Value returns the key's value without any fence check.
func (r *Resource) Value(key string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.values[key]
}

func (r *Resource) admit(key string, fence uint64) error {
	if fence < r.highest[key] {
		return fmt.Errorf("%w: %s: fence %d below %d", ErrStaleFence, key, fence, r.highest[key])
	}
	r.highest[key] = fence
	return nil
}
