package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A missing image names itself, says whether a registry answered at all,
// and gives the two ways on, under its own sentinel (not "redis-server did
// not start": nothing was started).
func TestNoImageSaysWhichAndWhy(t *testing.T) {
	offline := fmt.Errorf("pull x: %w", errors.New(`Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`))
	denied := errors.New("pull x: pull access denied for lockchaos/no-such-image, repository does not exist")
	for _, c := range []struct {
		candidates []string
		err        error
		want       string
	}{
		{[]string{"lockchaos/no-such-image:0"}, offline, "docker: no Redis image: lockchaos/no-such-image:0 is not found locally and no registry answers ("},
		{[]string{"lockchaos/no-such-image:0"}, denied, "docker: no Redis image: lockchaos/no-such-image:0 is not found locally and pulling failed ("},
		{[]string{DefaultRedisImage, FallbackRedisImage}, errors.Join(offline, context.DeadlineExceeded),
			"docker: no Redis image: neither lockchaos/redis:7-local nor redis:7 is found locally and no registry answers ("},
	} {
		err := noImage(c.candidates, c.err)
		msg := err.Error()
		if !errors.Is(err, ErrNoImage) || !strings.HasPrefix(msg, c.want) {
			t.Errorf("%v\n  = %q\n want it to start %q", c.candidates, msg, c.want)
		}
		for _, w := range []string{"run `make redis-image`", "pass --redis-image"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not say %q", msg, w)
			}
		}
		if strings.Contains(msg, "\n") || strings.Count(msg, "docker:") != 1 {
			t.Errorf("%q: one line, one prefix", msg)
		}
	}
}
