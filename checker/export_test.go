package checker

// SameReport and CheckInChunks serve the external tests.
var (
	SameReport    = sameReport
	CheckInChunks = checkInChunks
)
