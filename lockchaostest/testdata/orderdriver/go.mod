// The team's own module: its go.mod pins the Redis client its lock library
// needs (Dapr's components pin go-redis v9.6.3; this example pins the
// version lockchaos's own tests have in the module cache), and it never
// imports lockchaos, so lockchaos's client versions stay out of its graph.
module example.com/orders

go 1.26.0

require github.com/redis/go-redis/v9 v9.23.0

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)
