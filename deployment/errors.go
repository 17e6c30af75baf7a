package deployment

import "errors"

// Sentinel errors. Callers test them with errors.Is; the wrapping error says
// which deployment and why.
var (
	// ErrInvalidConfig means a Config failed Validate.
	ErrInvalidConfig = errors.New("deployment: invalid config")
	// ErrTopology means the operation needs a topology this deployment
	// lacks (for example Failover without a replica).
	ErrTopology = errors.New("deployment: operation not supported by this topology")
)
