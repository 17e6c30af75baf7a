package external

import "time"

// SetOwnerTTL shortens the owner marker's expiry for a test; the returned
// func restores it.
func SetOwnerTTL(d time.Duration) (restore func()) {
	old := ownerTTL
	ownerTTL = d
	return func() { ownerTTL = old }
}

// ClassFor is classFor: a cell schema's advisory class.
var ClassFor = classFor

// SchemaTag is the comment on the harness's schemas.
const SchemaTag = schemaTag
