package scenarios

// SetStreamChunkEvents sets the chunk size of the checker that follows a
// continuous cell, so a short test cell is checked in several chunks.
func SetStreamChunkEvents(n int) (restore func()) {
	old := streamChunkEvents
	streamChunkEvents = n
	return func() { streamChunkEvents = old }
}
