package deployment

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
	"github.com/lockchaos/lockchaos/netfault"
	"github.com/lockchaos/lockchaos/service/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// An etcd member announces one peer URL to all its peers, so, as on Redis
// Cluster, each member announces a relay of the harness's. etcd has no
// bind-source-addr, but every raft connection (the streams, the
// pipeline, snapshots) is an HTTP request that names its sender in the
// X-Server-From header: the relay reads the request's head, finds the
// sender's member id, and carries the connection through that pair's own
// link. A request that names no sender (a follower's lease renewal
// forwarded to the leader, /leases; probes, /version, /members) is known
// by the process that opened it (/proc: the socket's inode among a
// member's open files), and only one no member opened goes straight to
// the member. One connection carries one caller's requests, so the
// first request's caller is the connection's.

// ConsensusConfig tunes the Consensus topology's members.
type ConsensusConfig struct {
	// Heartbeat and Election are etcd's --heartbeat-interval and
	// --election-timeout; zero keeps etcd's defaults (100 ms, 1 s).
	Heartbeat, Election time.Duration
	// ReadyTimeout bounds the wait for the members to agree on a leader.
	// Default 20 s.
	ReadyTimeout time.Duration
	// NoPreVote runs raft without its pre-vote phase, 3.4's default. By
	// default the members run with --pre-vote (the default since etcd
	// 3.5): without it a member back from a cut or a restart campaigns
	// with the higher term it counted up alone and deposes the leader
	// (measured under 2 burners per core: leader-isolated cells with 6
	// acquisitions in 65 s, leader kills with the lock free 5 s while a
	// majority was up).
	NoPreVote bool
}

// Validate reports settings etcd would refuse.
func (c ConsensusConfig) Validate() error {
	switch {
	case c.Heartbeat < 0 || c.Election < 0 || c.ReadyTimeout < 0:
		return fmt.Errorf("%w: consensus: negative duration", ErrInvalidConfig)
	case c.Heartbeat > 0 && c.Heartbeat < time.Millisecond, c.Election > 0 && c.Election < time.Millisecond:
		return fmt.Errorf("%w: consensus: etcd counts its timers in whole milliseconds", ErrInvalidConfig)
	case c.Election > 0 && c.Election < 5*c.withDefaults().Heartbeat:
		return fmt.Errorf("%w: consensus: election timeout %v must be at least 5 heartbeats (%v)",
			ErrInvalidConfig, c.Election, c.withDefaults().Heartbeat)
	}
	return nil
}

func (c ConsensusConfig) withDefaults() ConsensusConfig {
	if c.Heartbeat == 0 {
		c.Heartbeat = 100 * time.Millisecond
	}
	if c.Election == 0 {
		c.Election = time.Second
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 20 * time.Second
	}
	return c
}

// consensusState is what the Consensus topology keeps beside its nodes.
type consensusState struct {
	relays []*relay
	urls   []string // each member's announced peer URL (its relay)
	ids    []uint64 // written under mu (the relays read them as they route)
	admin  *clientv3.Client

	mu    sync.Mutex
	nodes []backend.RedisNode       // the members, as they start
	byID  map[string]int            // X-Server-From → member index
	peers map[[2]int]*netfault.Link // [from, to]
	peer  []string                  // each member's own peer address
}

// peerNode is a member that listens for its peers apart from its clients.
type peerNode interface {
	PeerAddr() string
}

func (c *Deployment) startConsensus(ctx context.Context) error {
	cfg := c.cfg
	cc := cfg.Consensus.withDefaults()
	st := &consensusState{byID: map[string]int{}, peers: map[[2]int]*netfault.Link{}, peer: make([]string, cfg.Nodes)}
	c.consensus = st
	for j := range cfg.Nodes {
		r, err := newRelayBy(st.peerSender, func(caller string) (string, bool) { return st.route(caller, j) })
		if err != nil {
			return err
		}
		st.relays = append(st.relays, r)
		st.urls = append(st.urls, fmt.Sprintf("http://127.0.0.1:%d", r.Port()))
	}
	if err := c.startMembers(ctx, cc); err != nil {
		return err
	}
	if err := c.linkConsensus(); err != nil {
		return err
	}
	var err error
	if st.admin, err = etcd.Admin(c.memberAddrs()); err != nil {
		return fmt.Errorf("consensus: admin client: %w", err)
	}
	if _, err := etcd.WaitHealthy(ctx, st.admin, c.memberAddrs(), cc.ReadyTimeout); err != nil {
		return fmt.Errorf("consensus: %d members: %w", cfg.Nodes, err)
	}
	// A connection no member could be told for (a GET /members a member
	// makes while it starts, before its process is known) would carry
	// whatever its keep-alive reuse sends past every fault: end them all,
	// so the members connect again, known.
	for _, r := range st.relays {
		r.drop("")
	}
	// The relays know callers by the ids computed above: a member that
	// calls itself something else would cross no fault.
	for j, s := range etcd.Statuses(ctx, st.admin, c.memberAddrs(), 2*time.Second) {
		if s.Err == nil && s.ID != st.ids[j] {
			return fmt.Errorf("consensus: %s says its id is %x, the relays expect %x (etcd changed how it names members)",
				memberName(j), s.ID, st.ids[j])
		}
	}
	return nil
}

// startMembers starts the members of a new cluster, each announcing its
// relay as its peer URL.
func (c *Deployment) startMembers(ctx context.Context, cc ConsensusConfig) error {
	cfg, st := c.cfg, c.consensus
	token := randomToken()
	initial := make([]string, cfg.Nodes)
	// The relays already listen (and route by these): under the lock.
	st.mu.Lock()
	for j, u := range st.urls {
		id := etcd.MemberID([]string{u}, token)
		st.ids = append(st.ids, id)
		st.byID[strconv.FormatUint(id, 16)] = j
		initial[j] = fmt.Sprintf("%s=%s", memberName(j), u)
	}
	st.mu.Unlock()
	for j := range cfg.Nodes {
		nc := cfg.Node
		nc.Name = memberName(j)
		nc.ExtraArgs = append([]string{
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", token, "--initial-advertise-peer-urls", st.urls[j],
			"--heartbeat-interval", strconv.FormatInt(cc.Heartbeat.Milliseconds(), 10),
			"--election-timeout", strconv.FormatInt(cc.Election.Milliseconds(), 10),
			"--pre-vote=" + strconv.FormatBool(!cc.NoPreVote),
		}, cfg.Node.ExtraArgs...)
		n, err := cfg.Backend.StartNode(ctx, nc)
		if err != nil {
			return err
		}
		c.nodes = append(c.nodes, n)
		p, ok := n.(peerNode)
		if !ok {
			return fmt.Errorf("%w: the %s backend's %s has no peer address", ErrInvalidConfig, cfg.Backend.Name(), nc.Name)
		}
		st.mu.Lock()
		st.nodes = append(st.nodes, n)
		st.peer[j] = p.PeerAddr()
		st.mu.Unlock()
	}
	return nil
}

// linkConsensus makes every peer link (per pair and direction) and every
// pod's link to every member.
func (c *Deployment) linkConsensus() error {
	cfg, st := c.cfg, c.consensus
	for from := range cfg.Nodes {
		for to := range cfg.Nodes {
			if from == to {
				continue
			}
			l, err := c.network.NewLink(memberName(from)+"->"+memberName(to), st.peer[to])
			if err != nil {
				return err
			}
			st.mu.Lock()
			st.peers[[2]int{from, to}] = l
			st.mu.Unlock()
		}
	}
	for client := range cfg.Clients {
		row := make([]*netfault.Link, cfg.Nodes)
		for s := range cfg.Nodes {
			l, err := c.network.NewLink(fmt.Sprintf("client%d->%s", client, c.nodes[s].Name()), c.nodes[s].Addr())
			if err != nil {
				return err
			}
			row[s] = l
		}
		c.links = append(c.links, row)
	}
	return nil
}

func memberName(i int) string { return fmt.Sprintf("member%d", i) }

func randomToken() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "lockchaos-" + hex.EncodeToString(b)
}

// route is where relay to's connection from caller goes: the pair's link,
// or, for a request that names no member, the member itself.
func (st *consensusState) route(caller string, to int) (string, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	from, known := st.byID[caller]
	if !known {
		return st.peer[to], st.peer[to] != ""
	}
	l := st.peers[[2]int{from, to}]
	if l == nil {
		return "", false // not linked yet: the member retries
	}
	return l.Addr(), true
}

// memberAddrs are the members' own client addresses (no proxy).
func (c *Deployment) memberAddrs() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Addr()
	}
	return out
}

// PeerLink is the link of the connections member from opens to member
// to (nil outside the Consensus topology): from's pipeline messages to
// to, and, on each raft stream from opens (a GET the receiving side
// makes), what to sends from. Messages of one direction so cross both
// links of a pair: a one-way cut must cut the matching stream of each.
func (c *Deployment) PeerLink(from, to int) *netfault.Link {
	if c.consensus == nil {
		return nil
	}
	c.consensus.mu.Lock()
	defer c.consensus.mu.Unlock()
	return c.consensus.peers[[2]int{from, to}]
}

// MemberPeerLinks are every peer link to or from member i.
func (c *Deployment) MemberPeerLinks(i int) []*netfault.Link {
	var out []*netfault.Link
	for j := range c.nodes {
		if j != i {
			out = append(out, c.PeerLink(i, j), c.PeerLink(j, i))
		}
	}
	return out
}

// Leader asks the members (straight, past every fault) who leads: the
// index of the member a majority of the answering ones name, or false.
func (c *Deployment) Leader(ctx context.Context) (int, bool) {
	if c.consensus == nil {
		return -1, false
	}
	sts := etcd.Statuses(ctx, c.consensus.admin, c.memberAddrs(), 300*time.Millisecond)
	return etcd.LeaderIndex(sts, len(c.nodes)/2+1)
}

// AwaitLeader waits until a majority of the members name a leader other
// than not (-1: any), and returns it.
func (c *Deployment) AwaitLeader(ctx context.Context, not int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		if i, ok := c.Leader(ctx); ok && i != not {
			return i, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("consensus: no new leader within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Admin is the harness's own client to the members, straight to their
// client ports (the witness's and the faults'), or nil.
func (c *Deployment) Admin() *clientv3.Client {
	if c.consensus == nil {
		return nil
	}
	return c.consensus.admin
}

// WaitConsensusHealthy waits until every member names one leader again
// (after a fault healed).
func (c *Deployment) WaitConsensusHealthy(ctx context.Context, timeout time.Duration) error {
	if c.consensus == nil {
		return nil
	}
	_, err := etcd.WaitHealthy(ctx, c.consensus.admin, c.memberAddrs(), timeout)
	return err
}

func (c *Deployment) closeConsensus() {
	if c.consensus == nil {
		return
	}
	if c.consensus.admin != nil {
		_ = c.consensus.admin.Close()
	}
	for _, r := range c.consensus.relays {
		r.Close()
	}
}
