package lockimpl

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed scripts/release.lua
	releaseLua string
	//go:embed scripts/renew.lua
	renewLua string
	//go:embed scripts/fenced_acquire.lua
	fencedAcquireLua string

	// redis.Script runs EVALSHA and falls back to EVAL on NOSCRIPT, so a
	// node that restarted empty (script cache gone) still works.
	releaseScript       = redis.NewScript(releaseLua)
	renewScript         = redis.NewScript(renewLua)
	fencedAcquireScript = redis.NewScript(fencedAcquireLua)
)
