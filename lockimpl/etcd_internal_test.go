package lockimpl

import (
	"testing"

	"github.com/lockchaos/lockchaos/service/etcd"
)

// The witness must name a hold as the lock does, or no lease it sees
// matches a hold.
func TestEtcdMutexTokenIsTheWitnesss(t *testing.T) {
	if a, b := etcdMutexToken("order:1/694d8c", 42), etcd.MutexToken("order:1/694d8c", 42); a != b {
		t.Fatalf("lock %q, witness %q", a, b)
	}
}
