/* lockchaos-cdriver: the token lock served over the lockchaos driver protocol,
 * version 1 (docs/driver-protocol.md), in plain C: one thread, one Redis
 * connection, no library beyond libc.
 *
 * It exists for two reasons. It is the floor of the protocol's cost: a driver
 * that does nothing but the lock's two Redis commands and the protocol's
 * lines, so BenchmarkDriverCycle with it measures what a process boundary
 * costs rather than what a runtime costs (`make bench-drivers`,
 * docs/performance.md "The protocol's floor"). And it is an example for
 * anyone writing a driver in a language that is neither Go nor Python: what
 * must be definite, what must be an error, what the handshake is.
 *
 *   acquire: SET key <128 random bits, hex> NX PX ttl   (+OK: ok, nil: refused)
 *   release: EVALSHA sha1(release.lua) 1 key token       (:1: ok, :0: refused)
 *            (SCRIPT LOAD once per connection; NOSCRIPT: EVAL, as go-redis does)
 *
 * Anything indefinite (a timeout, a lost connection, a Redis error, a reply we
 * do not understand) answers "error", never "refused": the command may have
 * happened. A connection whose reply was not read is out of step with its
 * requests, so it is dropped and redialled on the next request. Each request
 * has one deadline, its timeout_ms (or LOCKCHAOS_CALL_TIMEOUT_MS if shorter),
 * for everything it does: dial, SCRIPT LOAD, the command, a NOSCRIPT retry.
 * The harness calls a driver hung when an answer is 2 s past that timeout, so
 * a timeout per read would not do (three round trips could each take it).
 *
 * Build: gcc -O2 -Wall -Wextra -o lockchaos-cdriver lockchaos-cdriver.c
 * Run:   lockchaos run --lock-driver c-token=./lockchaos-cdriver
 *
 * Environment (set by the harness): LOCKCHAOS_PROTOCOL, LOCKCHAOS_ADDRS (the
 * first address is used: a one-node lock), LOCKCHAOS_TTL_MS,
 * LOCKCHAOS_CALL_TIMEOUT_MS, LOCKCHAOS_POD. And for measuring only:
 *   CDRIVER_SPIN=1      never sleep: busy-poll stdin and the socket. For
 *                       measurement only (how much of a cycle is wake-ups);
 *                       it burns a core per driver, so never in chaos runs.
 *   CDRIVER_STATS=FILE  at exit, append one line of counts to FILE
 *                       (acquire and release: ok, refused, error).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* lockimpl/scripts/release.lua, byte for byte: drivers/cdriver_test.go
 * compares the two, so they cannot drift apart. */
static const char release_lua[] =
	"-- Compare-and-delete: remove the lock only if it still carries our token,\n"
	"-- so a holder that ran past its TTL cannot delete the next holder's lock.\n"
	"-- KEYS[1] lock key; ARGV[1] our token. Returns 1 if deleted, 0 if not ours.\n"
	"if redis.call(\"GET\", KEYS[1]) == ARGV[1] then\n"
	"  return redis.call(\"DEL\", KEYS[1])\n"
	"end\n"
	"return 0\n";
#define RELEASE_LUA_LEN (sizeof release_lua - 1)

#define KEYMAX 4096 /* longest key accepted; the harness's are a few bytes */

static long long ttl_ms, call_ms;
static int pod;
static struct addrinfo *addr;
static char addrtext[300];
static int spin;

/* ---- Redis connection (non-blocking; waits are polls up to the deadline) ---- */
static int rfd = -1;
static long long deadline; /* CLOCK_MONOTONIC ns: the current request's */
static char rbuf[1 << 16];
static size_t rpos, rlen;
static char wbuf[2 * KEYMAX + 1024 + sizeof release_lua];
static size_t wlen;
static char sha[41];
static int have_sha;
static char errmsg[512];

/* ---- protocol ---- */
static char inbuf[1 << 20];
static size_t inlen;
static char outbuf[2048];

/* Leases granted and not yet released. The table grows: a lease the harness
 * never releases (it gave up on the acquire just as the answer came) must
 * not use up a fixed table in a long cell; the Go driver's map grows too. */
struct lease {
	long long id;
	char tok[33];
	size_t klen;
	char *key;
};
static struct lease *leases;
static size_t nleases, capleases;
static long long nextlease;

static long long st_acq[3], st_rel[3];
enum { OK, REFUSED, ERROR };

static void die(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("lockchaos-cdriver: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void seterr(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof errmsg, fmt, ap);
	va_end(ap);
}

static long long now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void drop(void) {
	if (rfd >= 0)
		close(rfd);
	rfd = -1;
	rpos = rlen = 0;
	have_sha = 0;
}

/* waitfd: until fd is ready for events or the deadline passes (-1, errmsg
 * set, "i/o timeout" as Go says it). Spinning, it only checks the clock:
 * the caller retries its non-blocking call at once. */
static int waitfd(int fd, short events, const char *what) {
	for (;;) {
		long long left = deadline - now_ns();
		if (left <= 0) {
			seterr("%s %s: i/o timeout", what, addrtext);
			return -1;
		}
		if (spin)
			return 0;
		struct pollfd p = {fd, events, 0};
		int n = poll(&p, 1, (int)((left + 999999) / 1000000)); /* rounded up: no busy loop in the last ms */
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR) {
			seterr("%s %s: poll: %s", what, addrtext, strerror(errno));
			return -1;
		}
	}
}

static int dial(void) {
	int fd = socket(addr->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		seterr("socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, addr->ai_addr, addr->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			seterr("dial %s: %s", addrtext, strerror(errno));
			close(fd);
			return -1;
		}
		int e = 0;
		socklen_t l = sizeof e;
		for (;;) {
			if (waitfd(fd, POLLOUT, "dial") < 0) {
				close(fd);
				return -1;
			}
			struct pollfd p = {fd, POLLOUT, 0};
			if (poll(&p, 1, 0) > 0)
				break;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
		if (e) {
			seterr("dial %s: %s", addrtext, strerror(e));
			close(fd);
			return -1;
		}
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	rfd = fd;
	return 0;
}

/* RESP request building */
static void cmd_begin(int nargs) { wlen = (size_t)sprintf(wbuf, "*%d\r\n", nargs); }
static void cmd_arg(const char *s, size_t n) {
	wlen += (size_t)sprintf(wbuf + wlen, "$%zu\r\n", n);
	memcpy(wbuf + wlen, s, n);
	wlen += n;
	wbuf[wlen++] = '\r';
	wbuf[wlen++] = '\n';
}
static void cmd_str(const char *s) { cmd_arg(s, strlen(s)); }

static int cmd_send(void) {
	size_t off = 0;
	while (off < wlen) {
		/* MSG_NOSIGNAL: a connection the proxy closed is an error to
		 * answer, not a SIGPIPE that kills the driver */
		ssize_t n = send(rfd, wbuf + off, wlen - off, MSG_NOSIGNAL);
		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			seterr("write %s: %s", addrtext, strerror(errno));
			return -1;
		}
		if (waitfd(rfd, POLLOUT, "write") < 0)
			return -1;
	}
	return 0;
}

/* fill reads more of the reply into rbuf. It polls before it reads: a reply
 * is almost never there yet when we start waiting for it. */
static int fill(void) {
	if (rpos == rlen)
		rpos = rlen = 0;
	else if (rlen == sizeof rbuf) {
		if (rpos == 0) {
			seterr("reply line too long");
			return -1;
		}
		memmove(rbuf, rbuf + rpos, rlen - rpos);
		rlen -= rpos;
		rpos = 0;
	}
	for (;;) {
		if (waitfd(rfd, POLLIN, "read") < 0)
			return -1;
		ssize_t n = read(rfd, rbuf + rlen, sizeof rbuf - rlen);
		if (n > 0) {
			rlen += (size_t)n;
			return 0;
		}
		if (n == 0) {
			seterr("read %s: connection closed (EOF)", addrtext);
			return -1;
		}
		if (errno != EINTR && errno != EAGAIN) {
			seterr("read %s: %s", addrtext, strerror(errno));
			return -1;
		}
	}
}

/* rline: one CRLF-terminated line; *p points into rbuf until the next fill. */
static int rline(char **p, size_t *len) {
	size_t scan = rpos;
	for (;;) {
		for (; scan + 1 < rlen; scan++)
			if (rbuf[scan] == '\r' && rbuf[scan + 1] == '\n') {
				*p = rbuf + rpos;
				*len = scan - rpos;
				rpos = scan + 2;
				return 0;
			}
		size_t off = scan - rpos;
		if (fill() < 0)
			return -1;
		scan = rpos + off; /* fill may have moved the data */
	}
}

/* parseint: a decimal integer of at most 18 digits (no overflow). */
static int parseint(const char *s, size_t n, long long *v) {
	long long x = 0;
	size_t i = n > 0 && s[0] == '-';
	if (i == n || n - i > 18)
		return -1;
	for (size_t k = i; k < n; k++) {
		if (s[k] < '0' || s[k] > '9')
			return -1;
		x = x * 10 + (s[k] - '0');
	}
	*v = i ? -x : x;
	return 0;
}

struct reply {
	char type;   /* + - : $ * */
	long long n; /* integer, bulk length (-1: nil), array length */
	char *s;     /* simple string, error, bulk (NULL: nil, or too long and skipped) */
	size_t len;
};

static int reply(struct reply *r, int depth) {
	char *p;
	size_t n;
	if (depth > 8) {
		seterr("reply nested too deep");
		return -1;
	}
	if (rline(&p, &n) < 0)
		return -1;
	if (n == 0) {
		seterr("empty reply line");
		return -1;
	}
	r->type = p[0];
	r->s = p + 1;
	r->len = n - 1;
	switch (p[0]) {
	case '+':
	case '-':
		return 0;
	case ':':
		if (parseint(p + 1, n - 1, &r->n) < 0)
			break;
		return 0;
	case '$':
		if (parseint(p + 1, n - 1, &r->n) < 0 || r->n < -1)
			break;
		r->s = NULL;
		r->len = 0;
		if (r->n == -1)
			return 0;
		if ((size_t)r->n + 2 <= sizeof rbuf) {
			while (rlen - rpos < (size_t)r->n + 2)
				if (fill() < 0)
					return -1;
			r->s = rbuf + rpos;
			r->len = (size_t)r->n;
			rpos += (size_t)r->n + 2;
			return 0;
		}
		for (size_t left = (size_t)r->n + 2; left > 0;) { /* skip a huge bulk */
			if (rpos == rlen && fill() < 0)
				return -1;
			size_t k = rlen - rpos < left ? rlen - rpos : left;
			rpos += k;
			left -= k;
		}
		return 0;
	case '*': /* read and ignored: none of our commands answers with one */
		if (parseint(p + 1, n - 1, &r->n) < 0 || r->n < -1)
			break;
		for (long long i = 0; i < r->n; i++) {
			struct reply e;
			if (reply(&e, depth + 1) < 0)
				return -1;
		}
		return 0;
	}
	seterr("unexpected reply %.40s", p);
	return -1;
}

/* call sends the command in wbuf and reads its reply. On failure the
 * connection is dropped: its next reply would answer this command. */
static int call(struct reply *r) {
	if (cmd_send() < 0 || reply(r, 0) < 0) {
		drop();
		return -1;
	}
	return 0;
}

/* ready: a connection and, for release, the script's sha. */
static int ready(int needsha) {
	if (rfd < 0 && dial() < 0)
		return -1;
	if (needsha && !have_sha) {
		struct reply r;
		cmd_begin(3);
		cmd_str("SCRIPT");
		cmd_str("LOAD");
		cmd_arg(release_lua, RELEASE_LUA_LEN);
		if (call(&r) < 0)
			return -1;
		if (r.type != '$' || r.s == NULL || r.len != 40) {
			if (r.type == '-')
				seterr("SCRIPT LOAD: %.*s", (int)(r.len > 300 ? 300 : r.len), r.s);
			else {
				seterr("SCRIPT LOAD: unexpected reply type %c", r.type);
				drop();
			}
			return -1;
		}
		memcpy(sha, r.s, 40);
		sha[40] = 0;
		have_sha = 1;
	}
	return 0;
}

/* ---- JSON ---- */

/* jstr writes s as a JSON string. Bytes outside printable ASCII become
 * \u00XX: a Redis error may hold any bytes, and the line must stay valid
 * JSON (non-ASCII text shows as Latin-1; Redis's errors are ASCII). */
static size_t jstr(char *o, const char *s, size_t n) {
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;
	o[k++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			o[k++] = '\\', o[k++] = (char)c;
		else if (c < 0x20 || c >= 0x7f)
			k += (size_t)sprintf(o + k, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
		else
			o[k++] = (char)c;
	}
	o[k++] = '"';
	return k;
}

/* emit writes outbuf[:n] and a newline: one write, one line. */
static void emit(size_t n) {
	outbuf[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = write(1, outbuf + off, n - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			die("stdout: %s", strerror(errno));
		}
		off += (size_t)w;
	}
}

static void answer(long long id, int result) {
	emit((size_t)sprintf(outbuf, "{\"id\":%lld,\"result\":\"%s\"}", id, result == OK ? "ok" : "refused"));
}

static void answer_err(long long id, const char *what) {
	size_t n = (size_t)sprintf(outbuf, "{\"id\":%lld,\"result\":\"error\",\"error\":", id);
	size_t l = strlen(what);
	if (l > 300) /* 300 bytes escaped are at most 1800: outbuf holds them */
		l = 300;
	n += jstr(outbuf + n, what, l);
	outbuf[n++] = '}';
	emit(n);
}

struct jp {
	const char *p, *e;
};
static void ws(struct jp *j) {
	while (j->p < j->e && (*j->p == ' ' || *j->p == '\t' || *j->p == '\r' || *j->p == '\n'))
		j->p++;
}
static int hexval(char c) {
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
static int hex4(const char *p, unsigned *v) {
	*v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval(p[i]);
		if (h < 0)
			return -1;
		*v = *v << 4 | (unsigned)h;
	}
	return 0;
}
static size_t utf8(char *o, unsigned c) {
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* jstring: a JSON string, unescaped into o (capacity cap; o NULL to skip it).
 * Returns 0, -1 for bad JSON, -2 for too long. The key must reach Redis as
 * the harness's Go string: "\u003c" is '<' (encoding/json escapes <, > and &),
 * a surrogate pair is one 4-byte UTF-8 character, and a lone surrogate is
 * U+FFFD, as encoding/json decodes it. */
static int jstring(struct jp *j, char *o, size_t cap, size_t *olen) {
	size_t k = 0;
	int toolong = 0;
	ws(j);
	if (j->p >= j->e || *j->p != '"')
		return -1;
	j->p++;
	for (;;) {
		if (j->p >= j->e)
			return -1;
		char c = *j->p++;
		char tmp[4];
		size_t tn;
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20)
			return -1;
		if (c != '\\') {
			tmp[0] = c, tn = 1;
		} else {
			if (j->p >= j->e)
				return -1;
			c = *j->p++;
			switch (c) {
			case '"':
			case '\\':
			case '/':
				tmp[0] = c, tn = 1;
				break;
			case 'b':
				tmp[0] = '\b', tn = 1;
				break;
			case 'f':
				tmp[0] = '\f', tn = 1;
				break;
			case 'n':
				tmp[0] = '\n', tn = 1;
				break;
			case 'r':
				tmp[0] = '\r', tn = 1;
				break;
			case 't':
				tmp[0] = '\t', tn = 1;
				break;
			case 'u': {
				unsigned u, u2;
				if (j->e - j->p < 4 || hex4(j->p, &u) < 0)
					return -1;
				j->p += 4;
				if (u >= 0xd800 && u < 0xdc00 && j->e - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u' &&
				    hex4(j->p + 2, &u2) == 0 && u2 >= 0xdc00 && u2 < 0xe000) {
					j->p += 6;
					u = 0x10000 + ((u - 0xd800) << 10) + (u2 - 0xdc00);
				} else if (u >= 0xd800 && u < 0xe000)
					u = 0xfffd;
				tn = utf8(tmp, u);
				break;
			}
			default:
				return -1;
			}
		}
		if (o) {
			if (k + tn > cap)
				toolong = 1;
			else
				memcpy(o + k, tmp, tn), k += tn;
		}
	}
	if (olen)
		*olen = k;
	return toolong ? -2 : 0;
}

/* jint: an integer (as encoding/json into an int64, a fraction or exponent
 * is an error). */
static int jint(struct jp *j, long long *v) {
	ws(j);
	const char *s = j->p;
	if (j->p < j->e && *j->p == '-')
		j->p++;
	while (j->p < j->e && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return parseint(s, (size_t)(j->p - s), v);
}

/* jskip: any value, for the fields this driver does not read. */
static int jskip(struct jp *j) {
	ws(j);
	if (j->p >= j->e)
		return -1;
	if (*j->p == '"')
		return jstring(j, NULL, 0, NULL);
	if (*j->p == '{' || *j->p == '[') {
		int depth = 0;
		while (j->p < j->e) {
			char c = *j->p;
			if (c == '"') {
				if (jstring(j, NULL, 0, NULL) < 0)
					return -1;
				continue;
			}
			j->p++;
			if (c == '{' || c == '[')
				depth++;
			else if ((c == '}' || c == ']') && --depth == 0)
				return 0;
		}
		return -1;
	}
	const char *s = j->p; /* a number, true, false or null */
	while (j->p < j->e && strchr(",}] \t\r\n", *j->p) == NULL)
		j->p++;
	return j->p > s ? 0 : -1;
}

struct request {
	long long id, lease, timeout_ms;
	char op[16];
	size_t oplen;
	int hasid, keytoolong;
	char key[KEYMAX];
	size_t klen;
};
static struct request req;

static int parse(const char *line, size_t n, struct request *r) {
	struct jp j = {line, line + n};
	char name[32];
	size_t nl;
	r->hasid = 0, r->lease = 0, r->timeout_ms = 0, r->oplen = 0, r->klen = 0, r->keytoolong = 0;
	ws(&j);
	if (j.p >= j.e || *j.p++ != '{')
		return -1;
	ws(&j);
	if (j.p < j.e && *j.p == '}')
		return 0;
	for (;;) {
		int rc = jstring(&j, name, sizeof name, &nl);
		if (rc == -1)
			return -1;
		if (rc == -2)
			nl = 0;
		ws(&j);
		if (j.p >= j.e || *j.p++ != ':')
			return -1;
		/* encoding/json matches names case-insensitively; the harness writes them lower case */
		if (nl == 2 && !strncasecmp(name, "id", 2)) {
			if (jint(&j, &r->id) < 0)
				return -1;
			r->hasid = 1;
		} else if (nl == 2 && !strncasecmp(name, "op", 2)) {
			rc = jstring(&j, r->op, sizeof r->op - 1, &r->oplen);
			if (rc == -1)
				return -1;
			if (rc == -2)
				r->oplen = 1, r->op[0] = '?';
		} else if (nl == 3 && !strncasecmp(name, "key", 3)) {
			rc = jstring(&j, r->key, sizeof r->key, &r->klen);
			if (rc == -1)
				return -1;
			r->keytoolong = rc == -2;
		} else if (nl == 5 && !strncasecmp(name, "lease", 5)) {
			if (jint(&j, &r->lease) < 0)
				return -1;
		} else if (nl == 10 && !strncasecmp(name, "timeout_ms", 10)) {
			if (jint(&j, &r->timeout_ms) < 0)
				return -1;
		} else if (jskip(&j) < 0)
			return -1;
		ws(&j);
		if (j.p < j.e && *j.p == ',') {
			j.p++;
			continue;
		}
		if (j.p < j.e && *j.p == '}') {
			j.p++;
			ws(&j);
			return j.p == j.e ? 0 : -1;
		}
		return -1;
	}
}

/* ---- the lock ---- */
static void acquire(struct request *r) {
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[16];
	struct reply rp;
	char px[24];

	if (r->keytoolong) {
		st_acq[ERROR]++;
		answer_err(r->id, "key too long for this driver");
		return;
	}
	/* room for the lease before the SET: once Redis granted it, nothing may fail */
	if (nleases == capleases) {
		size_t c = capleases ? 2 * capleases : 16;
		struct lease *t = realloc(leases, c * sizeof *t);
		if (!t) {
			st_acq[ERROR]++;
			answer_err(r->id, "out of memory");
			return;
		}
		leases = t, capleases = c;
	}
	struct lease *l = &leases[nleases];
	if (!(l->key = malloc(r->klen ? r->klen : 1))) {
		st_acq[ERROR]++;
		answer_err(r->id, "out of memory");
		return;
	}
	if (getrandom(rnd, sizeof rnd, 0) != sizeof rnd) {
		seterr("getrandom: %s", strerror(errno));
		goto fail;
	}
	for (int i = 0; i < 16; i++)
		l->tok[2 * i] = hex[rnd[i] >> 4], l->tok[2 * i + 1] = hex[rnd[i] & 15];
	l->tok[32] = 0;
	if (ready(0) < 0)
		goto fail;
	cmd_begin(6);
	cmd_str("SET");
	cmd_arg(r->key, r->klen);
	cmd_arg(l->tok, 32);
	cmd_str("NX");
	cmd_str("PX");
	cmd_arg(px, (size_t)sprintf(px, "%lld", ttl_ms));
	if (call(&rp) < 0)
		goto fail;
	if (rp.type == '+' && rp.len == 2 && !memcmp(rp.s, "OK", 2)) {
		l->id = ++nextlease;
		memcpy(l->key, r->key, r->klen);
		l->klen = r->klen;
		nleases++;
		st_acq[OK]++;
		emit((size_t)sprintf(outbuf, "{\"id\":%lld,\"result\":\"ok\",\"lease\":%lld,\"token\":\"%s\"}", r->id, l->id, l->tok));
		return;
	}
	free(l->key);
	if (rp.type == '$' && rp.n == -1) { /* NX: someone holds it; definitely not ours */
		st_acq[REFUSED]++;
		answer(r->id, REFUSED);
		return;
	}
	if (rp.type == '-')
		seterr("SET: %.*s", (int)(rp.len > 300 ? 300 : rp.len), rp.s);
	else {
		seterr("SET: unexpected reply type %c", rp.type);
		drop();
	}
	st_acq[ERROR]++;
	answer_err(r->id, errmsg);
	return;
fail:
	free(l->key);
	st_acq[ERROR]++;
	answer_err(r->id, errmsg);
}

static void release(struct request *r) {
	struct lease l;
	struct reply rp;
	size_t i;
	for (i = 0; i < nleases && leases[i].id != r->lease; i++)
		;
	if (i == nleases) { /* never granted, or released already: as the Go driver, a definite refusal */
		st_rel[REFUSED]++;
		answer(r->id, REFUSED);
		return;
	}
	/* forgotten whatever the outcome, as the Go driver does: the harness
	 * does not release a lease twice */
	l = leases[i];
	leases[i] = leases[--nleases];
	if (ready(1) < 0)
		goto fail;
	cmd_begin(5);
	cmd_str("EVALSHA");
	cmd_arg(sha, 40);
	cmd_str("1");
	cmd_arg(l.key, l.klen);
	cmd_arg(l.tok, 32);
	if (call(&rp) < 0)
		goto fail;
	if (rp.type == '-' && rp.len >= 8 && !memcmp(rp.s, "NOSCRIPT", 8)) { /* the script cache was flushed */
		cmd_begin(5);
		cmd_str("EVAL");
		cmd_arg(release_lua, RELEASE_LUA_LEN);
		cmd_str("1");
		cmd_arg(l.key, l.klen);
		cmd_arg(l.tok, 32);
		if (call(&rp) < 0)
			goto fail;
	}
	if (rp.type == ':' && (rp.n == 0 || rp.n == 1)) {
		st_rel[rp.n ? OK : REFUSED]++;
		answer(r->id, rp.n ? OK : REFUSED);
		free(l.key);
		return;
	}
	if (rp.type == '-')
		seterr("EVALSHA: %.*s", (int)(rp.len > 300 ? 300 : rp.len), rp.s);
	else {
		seterr("EVALSHA: unexpected reply type %c", rp.type);
		drop();
	}
fail:
	free(l.key);
	st_rel[ERROR]++;
	answer_err(r->id, errmsg);
}

static void stats(void) {
	const char *f = getenv("CDRIVER_STATS");
	if (!f || !*f)
		return;
	FILE *o = fopen(f, "a");
	if (!o)
		return;
	fprintf(o, "pid=%d pod=%d acquire ok=%lld refused=%lld error=%lld release ok=%lld refused=%lld error=%lld\n", getpid(), pod,
	        st_acq[0], st_acq[1], st_acq[2], st_rel[0], st_rel[1], st_rel[2]);
	fclose(o);
}

static void resolve(const char *addrs) {
	size_t al = strcspn(addrs, ",");
	if (al >= sizeof addrtext)
		die("address too long");
	memcpy(addrtext, addrs, al);
	addrtext[al] = 0;
	char host[300], *colon = strrchr(addrtext, ':');
	if (!colon || colon == addrtext)
		die("address %s: want host:port", addrtext);
	memcpy(host, addrtext, (size_t)(colon - addrtext));
	host[colon - addrtext] = 0;
	char *h = host;
	size_t hl = strlen(h);
	if (h[0] == '[' && hl > 1 && h[hl - 1] == ']') { /* [v6]:port */
		h[hl - 1] = 0;
		h++;
	}
	struct addrinfo hints = {0};
	hints.ai_socktype = SOCK_STREAM;
	int e = getaddrinfo(h, colon + 1, &hints, &addr);
	if (e)
		die("resolve %s: %s", addrtext, gai_strerror(e));
}

int main(void) {
	const char *proto = getenv("LOCKCHAOS_PROTOCOL"), *addrs = getenv("LOCKCHAOS_ADDRS"), *t = getenv("LOCKCHAOS_TTL_MS"),
	           *c = getenv("LOCKCHAOS_CALL_TIMEOUT_MS"), *pd = getenv("LOCKCHAOS_POD"), *sp = getenv("CDRIVER_SPIN");
	/* the hello says which version we speak and the harness checks it; this
	 * says why on stderr, which the harness quotes */
	if (proto && strcmp(proto, "1") != 0)
		die("the harness speaks driver protocol %s; this driver speaks 1", proto);
	if (!addrs || !*addrs || !t || (ttl_ms = atoll(t)) <= 0)
		die("LOCKCHAOS_ADDRS and LOCKCHAOS_TTL_MS must be set: run me from lockchaos");
	call_ms = c ? atoll(c) : 0;
	if (call_ms <= 0)
		call_ms = 3000;
	pod = pd ? atoi(pd) : 0;
	spin = sp && atoi(sp) > 0;
	if (spin)
		fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
	resolve(addrs);

	static const char hello[] = "{\"hello\":\"lockchaos-driver\",\"version\":1,\"name\":\"lockchaos-cdriver token (C)\"}\n";
	if (write(1, hello, sizeof hello - 1) != (ssize_t)(sizeof hello - 1))
		die("stdout: %s", strerror(errno));

	for (;;) {
		ssize_t n = read(0, inbuf + inlen, sizeof inbuf - inlen);
		if (n < 0 && (errno == EINTR || (spin && errno == EAGAIN)))
			continue;
		if (n < 0)
			die("stdin: %s", strerror(errno));
		if (n == 0) /* the harness closed stdin: the cell is over */
			break;
		inlen += (size_t)n;
		size_t start = 0;
		char *nl;
		while ((nl = memchr(inbuf + start, '\n', inlen - start))) {
			size_t len = (size_t)(nl - (inbuf + start));
			if (parse(inbuf + start, len, &req) < 0 || !req.hasid)
				die("bad request %.*s", (int)(len > 200 ? 200 : len), inbuf + start);
			long long ms = req.timeout_ms > 0 && req.timeout_ms < call_ms ? req.timeout_ms : call_ms;
			deadline = now_ns() + ms * 1000000LL;
			if (req.oplen == 7 && !memcmp(req.op, "acquire", 7))
				acquire(&req);
			else if (req.oplen == 7 && !memcmp(req.op, "release", 7))
				release(&req);
			else {
				char m[64];
				snprintf(m, sizeof m, "unknown op %.*s", (int)req.oplen, req.op);
				answer_err(req.id, m);
			}
			start += len + 1;
		}
		memmove(inbuf, inbuf + start, inlen - start);
		inlen -= start;
		if (inlen == sizeof inbuf)
			die("request line too long");
	}
	stats();
	return 0;
}
