package etcd

import (
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// ErrNotHealthy means the members did not agree on one leader in time.
var ErrNotHealthy = errors.New("etcd: cluster not healthy")

// MemberID is the id etcd gives a member of a new cluster: the first 8
// bytes of SHA-1 over its sorted peer URLs and the cluster token
// (membership.NewMember with no time). Peers name themselves by it on
// every raft stream (X-Server-From), which is how the deployment's relays
// know the caller; the deployment checks it against the members' own
// answer once the cluster stands.
func MemberID(peerURLs []string, token string) uint64 {
	urls := append([]string(nil), peerURLs...)
	sort.Strings(urls)
	sum := sha1.Sum([]byte(strings.Join(urls, "") + token))
	return binary.BigEndian.Uint64(sum[:8])
}

// Admin is a client of the harness's own, straight to the members'
// client ports (no proxy a fault touches): for the deployment's and the
// faults' questions, never for a lock.
func Admin(addrs []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: addrs, DialTimeout: 2 * time.Second,
		Logger: nopLogger, DialKeepAliveTime: time.Second, DialKeepAliveTimeout: time.Second})
}

// MemberStatus is one member's own answer: who it is, who it thinks
// leads, in which raft term.
type MemberStatus struct {
	ID, Leader, Term uint64
	Revision         int64
	Err              error
}

// Statuses asks each member at addrs (in order) for its status, each
// bounded by per.
func Statuses(ctx context.Context, c *clientv3.Client, addrs []string, per time.Duration) []MemberStatus {
	out := make([]MemberStatus, len(addrs))
	for i, a := range addrs {
		cctx, cancel := context.WithTimeout(ctx, per)
		st, err := c.Status(cctx, a)
		cancel()
		if err != nil {
			out[i].Err = err
			continue
		}
		out[i] = MemberStatus{ID: st.Header.MemberId, Leader: st.Leader, Term: st.RaftTerm, Revision: st.Header.Revision}
	}
	return out
}

// LeaderIndex is the index in sts of the member that every answering
// member names as leader, if at least quorum of them answer and agree.
func LeaderIndex(sts []MemberStatus, quorum int) (int, bool) {
	votes := map[uint64]int{}
	for _, s := range sts {
		if s.Err == nil && s.Leader != 0 {
			votes[s.Leader]++
		}
	}
	for id, k := range votes {
		if k < quorum {
			continue
		}
		for i, s := range sts {
			if s.Err == nil && s.ID == id {
				return i, true
			}
		}
	}
	return -1, false
}

// WaitHealthy waits until every member at addrs answers and names the
// same leader, and a linearizable read goes through (the leader has
// committed an entry of its term): what a cluster needs before a cell's
// first lock. It returns the leader's index.
func WaitHealthy(ctx context.Context, c *clientv3.Client, addrs []string, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		sts := Statuses(ctx, c, addrs, 500*time.Millisecond)
		if i, ok := LeaderIndex(sts, len(addrs)); ok {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, err := c.Get(cctx, "lockchaos-health")
			cancel()
			if err == nil {
				return i, nil
			}
			last = "a read: " + err.Error()
		} else {
			last = describe(sts)
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("%w within %v: %s", ErrNotHealthy, timeout, last)
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func describe(sts []MemberStatus) string {
	var parts []string
	for i, s := range sts {
		if s.Err != nil {
			parts = append(parts, fmt.Sprintf("member%d: %v", i, s.Err))
		} else {
			parts = append(parts, fmt.Sprintf("member%d: leader %x term %d", i, s.Leader, s.Term))
		}
	}
	return strings.Join(parts, "; ")
}

// nopLogger keeps the client's own logging off the harness's output.
var nopLogger = zap.NewNop()
