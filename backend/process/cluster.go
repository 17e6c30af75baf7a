package process

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockchaos/lockchaos/backend"
)

// clusterSupported says whether the local redis-server can run the
// Cluster topology: it needs bind-source-addr (Redis 7.0), by which the
// harness tells the nodes apart on their links to each other. Asked once.
var clusterSupported = sync.OnceValue(func() error {
	bin, err := FindRedisServer()
	if err != nil {
		return backend.Unsupported("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := RedisServerVersion(ctx, bin)
	if err != nil {
		return backend.Unsupported("%v", err)
	}
	major, _, _ := strings.Cut(v, ".")
	if m, err := strconv.Atoi(major); err != nil || m < 7 {
		return backend.Unsupported("Redis Cluster cells need redis-server 7.0 or later (bind-source-addr, by which "+
			"the harness proxies each pair of nodes); %s is %s", bin, v)
	}
	return nil
})
