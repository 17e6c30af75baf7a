// Command lockchaos runs lock implementations under faults on real Redis
// and checks the recorded histories for mutual-exclusion violations.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "lockchaos: commands are not implemented yet; see README.md")
	os.Exit(2)
}
