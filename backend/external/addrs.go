package external

import (
	"fmt"
	"net"
	"strings"
)

// CheckAddrs says what is wrong with the addresses before anything is
// dialled: each must be host:port, and each a different server (a lock
// of 3 nodes on one server is no Redlock). Hosts compare without case.
func CheckAddrs(addrs []string) error {
	seen := map[string]string{}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			return fmt.Errorf("--redis-addr %q: want host:port", a)
		}
		key := strings.ToLower(host) + ":" + port
		if first, dup := seen[key]; dup {
			as := ""
			if first != a {
				as = " (as " + first + ")"
			}
			return fmt.Errorf("--redis-addr %s given twice%s: each address must be a different server "+
				"(a lock of 3 nodes on one server is no Redlock)", a, as)
		}
		seen[key] = a
	}
	return nil
}
