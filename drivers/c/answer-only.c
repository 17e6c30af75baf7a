/* answer-only: a lockchaos driver (protocol 1) that answers every request
 * "ok" without touching Redis. Not a lock: never use it in a chaos run. It
 * measures the protocol's pipes alone (two pipe round trips per cycle), the
 * part of BenchmarkDriverCycle no driver can avoid (`make bench-drivers`).
 *
 * It reads the harness's own lines ({"id":N,"op":"acquire"|"release",...},
 * drivers/wire.go) and looks only at id and op; inside a JSON string a quote
 * is escaped, so a key cannot look like either.
 *
 * CDRIVER_SPIN=1: busy-poll stdin, never sleep (measurement only).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char in[1 << 16], out[256];

int main(void) {
	static const char hello[] = "{\"hello\":\"lockchaos-driver\",\"version\":1,\"name\":\"answer-only (not a lock)\"}\n";
	if (write(1, hello, sizeof hello - 1) != (ssize_t)(sizeof hello - 1))
		return 1;
	const char *sp = getenv("CDRIVER_SPIN");
	int spin = sp && atoi(sp) > 0;
	if (spin)
		fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	size_t len = 0;
	long long lease = 0;
	for (;;) {
		ssize_t n = read(0, in + len, sizeof in - len);
		if (n < 0 && (errno == EINTR || (spin && errno == EAGAIN)))
			continue;
		if (n <= 0) /* stdin closed: the cell is over */
			return n < 0;
		len += (size_t)n;
		size_t start = 0;
		char *nl;
		while ((nl = memchr(in + start, '\n', len - start))) {
			*nl = 0;
			char *l = in + start, *p = strstr(l, "\"id\":");
			if (!p) {
				fprintf(stderr, "answer-only: bad request %.200s\n", l);
				return 1;
			}
			long long id = strtoll(p + 5, NULL, 10);
			int k = strstr(l, "\"op\":\"acquire\"")
			            ? sprintf(out, "{\"id\":%lld,\"result\":\"ok\",\"lease\":%lld,\"token\":\"00000000000000000000000000000000\"}\n", id, ++lease)
			            : sprintf(out, "{\"id\":%lld,\"result\":\"ok\"}\n", id);
			if (write(1, out, (size_t)k) != k)
				return 1;
			start = (size_t)(nl - in) + 1;
		}
		memmove(in, in + start, len - start);
		len -= start;
		if (len == sizeof in) {
			fprintf(stderr, "answer-only: request line too long\n");
			return 1;
		}
	}
}
