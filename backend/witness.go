package backend

import (
	"context"
	"time"
)

// KeyOp is what a server did to a key, as a witness saw it.
type KeyOp string

// What a witness reports. The first five are the server's own acts, in
// the order it did them; Present and Absent are what the witness found
// when it (re)connected; Blind and Watching bound the stretches it saw
// nothing of.
const (
	KeySet     KeyOp = "set"     // written (SET, SET NX PX, a script's SET): Value and Deadline
	KeyExpire  KeyOp = "expire"  // its expiry changed (PEXPIRE, a watchdog's renewal): Deadline, zero for none
	KeyDel     KeyOp = "del"     // deleted by a command (DEL, a release script): Value is what it held
	KeyExpired KeyOp = "expired" // the server removed it because its time ran out: Value is what it held
	KeyEvicted KeyOp = "evicted" // the server removed it for memory
	KeyPresent KeyOp = "present" // found holding Value (and Deadline) on (re)connecting
	KeyAbsent  KeyOp = "absent"  // found missing on reconnecting (a node back from a restart)
	// Blind: the witness lost sight of the node (killed, the connection
	// dropped; Reason says why): nothing it did until the next Watching
	// was seen. A witness that cannot watch at all (notifications refused)
	// reports Blind once and nothing else.
	Blind    KeyOp = "blind"
	Watching KeyOp = "watching" // the witness sees the node (first connect, or back after Blind)
)

// KeyChange is one thing a witness saw on a node.
type KeyChange struct {
	Node  string
	Key   string // as the server names it ("" for Blind and Watching)
	Op    KeyOp
	Value string
	// Deadline is when the key's expiry runs out on the harness's clock
	// (zero: no expiry, or not known for a removal).
	Deadline time.Time
	At       time.Time // when the witness saw it
	Reason   string    // Blind: why
	// Revision and Lease are an etcd write's revision and lease (hex).
	Revision int64
	Lease    string
}

// ObservableNode is a node that reports its own key changes as it makes
// them (a simulated one: the change and its report happen at the same
// virtual instant), so its witness needs no connection. match says which
// keys to report; stop ends the reports.
type ObservableNode interface {
	RedisNode
	ObserveKeys(match func(key string) bool, sink func(KeyChange)) (stop func())
}

// ResourceNode is a node that holds the protected resource itself (a
// database whose locks write the resource in their own transaction):
// ResetResource empties it before each part of a cell, as the harness's
// own resource starts empty: the cell's, whose keys are under keyPrefix
// ("" on a server the harness started; on a user's, the cell's schema).
type ResourceNode interface {
	ResetResource(ctx context.Context, keyPrefix string) error
}
