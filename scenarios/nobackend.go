package scenarios

import (
	"context"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// noBackend stands in for the backend Options did not give, so that a
// plan in error (ErrNoBackend) still names one; it starts nothing.
type noBackend struct{}

func (noBackend) Name() string { return "none" }

func (noBackend) StartNode(context.Context, backend.NodeConfig) (backend.RedisNode, error) {
	return nil, ErrNoBackend
}

func (noBackend) NodeOpTime() time.Duration { return 0 }

func (noBackend) Supports(backend.Needs) error { return nil }
