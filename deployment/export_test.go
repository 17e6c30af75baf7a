package deployment

// PeerConnsByCaller counts the connections the consensus relays carry,
// by the caller they were known by ("" for none).
func (c *Deployment) PeerConnsByCaller() map[string]int {
	out := map[string]int{}
	if c.consensus == nil {
		return out
	}
	for _, r := range c.consensus.relays {
		r.mu.Lock()
		for _, k := range r.conns {
			out[k]++
		}
		r.mu.Unlock()
	}
	return out
}
