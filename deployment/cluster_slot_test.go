package deployment

import "testing"

// Slots as the cluster specification computes them: its own example
// (CRC16 of "123456789" is 0x31C3), a key and its hash tag on one slot,
// and the edge cases of a tag (empty, unclosed, the first one only).
func TestKeySlotFollowsTheSpecification(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":           0x31C3,
		"foo":                 12182,
		"{user1000}.follower": KeySlot("user1000"),
		"{order:1}:fence":     KeySlot("order:1"),
		"foo{{bar}}zap":       KeySlot("{bar"),
		"foo{bar}{zap}":       KeySlot("bar"),
	} {
		if got := KeySlot(key); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", key, got, want)
		}
	}
	if KeySlot("foo{}{bar}") == KeySlot("bar") {
		t.Error("an empty hash tag must hash the whole key")
	}
	lo, hi := shardRange(1, 3)
	if k := keyInSlots("probe", lo, hi); KeySlot(k) < lo || KeySlot(k) > hi {
		t.Errorf("keyInSlots(%d..%d) = %q on slot %d", lo, hi, k, KeySlot(k))
	}
	if lo0, _ := shardRange(0, 3); lo0 != 0 {
		t.Error("shard 0 must start at slot 0")
	}
	if _, hi2 := shardRange(2, 3); hi2 != ClusterSlots-1 {
		t.Errorf("the last shard ends at %d", hi2)
	}
}

// A node's view is read from CLUSTER INFO and CLUSTER NODES as Redis 7
// prints them: flags, the primary of a replica, epochs, slot ranges, and
// a slot being migrated left out of what the node serves.
func TestParseClusterView(t *testing.T) {
	v := parseClusterView("cluster_state:ok\r\ncluster_slots_ok:16384\r\ncluster_known_nodes:3\r\n",
		"a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460 [5461->-b2]\n"+
			"b2 127.0.0.1:7002@17002 master - 0 1 2 connected 5461-10922 16000\n"+
			"c3 127.0.0.1:7003@17003 slave,fail? b2 0 1 2 connected\n"+
			"d4 :0@0 handshake,noaddr - 0 0 0 disconnected\n")
	if v.info["cluster_state"] != "ok" || v.info["cluster_slots_ok"] != "16384" {
		t.Errorf("info %v", v.info)
	}
	a, b, c := v.nodes["a1"], v.nodes["b2"], v.nodes["c3"]
	if !a.master() || !a.serves(5460) || a.serves(5461) || a.epoch != 1 {
		t.Errorf("a1: %+v", a)
	}
	if !b.serves(16000) || b.serves(16001) || b.epoch != 2 {
		t.Errorf("b2: %+v", b)
	}
	if !c.replicaOf("b2") || c.master() {
		t.Errorf("c3: %+v", c)
	}
	if !v.migrating {
		t.Error("a slot being migrated ([5461->-b2]) must mark the view half-moved")
	}
	if len(v.known()) != 3 {
		t.Errorf("known %d nodes, want 3 (the handshake is not one yet)", len(v.known()))
	}
}
