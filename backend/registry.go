package backend

import "sync"

// registry tracks every node this process started and has not closed, so a
// signal handler (or a test's TestMain) can make sure none outlives the run.
var registry = struct {
	sync.Mutex
	nodes map[RedisNode]struct{}
	dirs  []string
}{nodes: map[RedisNode]struct{}{}}

// TrackNode records a node (and its temp dir, if it has one, else "") so
// that LiveNodes lists it and KillAll closes it. A Backend outside this
// package (such as backend/docker) calls it as soon as its node exists,
// before the server starts, and UntrackNode from the node's Close.
func TrackNode(n RedisNode, dir string) {
	registry.Lock()
	defer registry.Unlock()
	registry.nodes[n] = struct{}{}
	if dir != "" {
		registry.dirs = append(registry.dirs, dir)
	}
}

// TrackDir lists a temp dir (not a node's) for the leak checks.
func TrackDir(dir string) {
	registry.Lock()
	defer registry.Unlock()
	registry.dirs = append(registry.dirs, dir)
}

// TempDirs returns every node temp dir this process has created, removed
// or not, so a leak check can look for the ones still there.
func TempDirs() []string {
	registry.Lock()
	defer registry.Unlock()
	return append([]string(nil), registry.dirs...)
}

// UntrackNode forgets a node recorded by TrackNode; its temp dir stays
// listed by TempDirs, for the leak check. Call it from the node's Close.
func UntrackNode(n RedisNode) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.nodes, n)
}

// LiveNodes returns the nodes started by this process and not yet closed.
func LiveNodes() []RedisNode {
	registry.Lock()
	defer registry.Unlock()
	out := make([]RedisNode, 0, len(registry.nodes))
	for n := range registry.nodes {
		out = append(out, n)
	}
	return out
}

// KillAll closes every node this process started and has not closed: the
// last line of defence for Ctrl-C and panics. It returns how many it closed.
func KillAll() int {
	nodes := LiveNodes()
	for _, n := range nodes {
		_ = n.Close()
	}
	return len(nodes)
}
