// Package redislog silences go-redis's internal logger, the one switch the
// harness must flip process-wide: go-redis logs dial errors ("failed to
// dial ...") through a single package-level logger (redis.SetLogger) and
// has no per-client one. Under injected faults those errors come by the
// thousand, and every outcome that matters is in the history instead.
package redislog

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var once sync.Once

// Quiet sets go-redis's process-wide logger to one that drops every line,
// once per process. A program that wants go-redis's lines back calls
// redis.SetLogger after the harness has built its first client.
func Quiet() { once.Do(func() { redis.SetLogger(quiet{}) }) }
