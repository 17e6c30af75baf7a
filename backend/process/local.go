package process

import "context"

// Local is the process backend on the redis-server found here
// (FindRedisServer), with that server's version; ctx bounds asking it.
func Local(ctx context.Context) (Backend, string, error) {
	bin, err := FindRedisServer()
	if err != nil {
		return Backend{}, "", err
	}
	v, err := RedisServerVersion(ctx, bin)
	if err != nil {
		return Backend{}, "", err
	}
	return Backend{}, v, nil
}
