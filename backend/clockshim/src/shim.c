/*
 * lockchaos clock shim: an LD_PRELOAD library that moves a redis-server's
 * wall clock by an offset the harness sets at any moment.
 *
 * Redis takes key expiry from the wall clock (gettimeofday through ustime()
 * and mstime()), so moving this clock forward expires lock keys early and
 * moving it back keeps them longer: the clock jumps the Redlock critiques
 * are about. Monotonic clocks are left alone.
 *
 * The offset (int64 nanoseconds) lives in a shared memory page: the file
 * descriptor named by LOCKCHAOS_CLOCK_FD (a memfd the harness also maps),
 * or the file named by LOCKCHAOS_CLOCK_FILE (a container, which cannot
 * inherit a descriptor, gets the harness's file through a bind mount).
 * Reading it is one load, so a jump takes effect on the next clock call.
 *
 * It allocates nothing: libfaketime resolves the real functions lazily,
 * inside its hooks, and with jemalloc that recursion hangs redis-server at
 * start-up. Here the real functions are resolved once, in the constructor;
 * a call that comes before that (jemalloc's own initialisation) goes to
 * the system call directly.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *offset_ns;
static int (*real_clock_gettime)(clockid_t, struct timespec *);
static int (*real_gettimeofday)();

__attribute__((constructor)) static void lockchaos_clock_init(void) {
	const char *fd = getenv("LOCKCHAOS_CLOCK_FD");
	const char *file = getenv("LOCKCHAOS_CLOCK_FILE");
	int n = -1;
	if (fd != NULL) {
		n = atoi(fd);
	} else if (file != NULL) {
		n = open(file, O_RDONLY | O_CLOEXEC);
	}
	if (n >= 0) {
		void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, n, 0);
		if (p != MAP_FAILED) {
			offset_ns = (volatile int64_t *)p;
		}
		close(n); /* the mapping stays */
	}
	real_clock_gettime = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	real_gettimeofday = (int (*)())dlsym(RTLD_NEXT, "gettimeofday");
}

static int64_t offset(void) {
	return offset_ns ? __atomic_load_n(offset_ns, __ATOMIC_RELAXED) : 0;
}

static int wall_clock(clockid_t c) {
	return c == CLOCK_REALTIME || c == CLOCK_REALTIME_COARSE;
}

int clock_gettime(clockid_t c, struct timespec *ts) {
	int r = real_clock_gettime ? real_clock_gettime(c, ts) : (int)syscall(SYS_clock_gettime, c, ts);
	if (r == 0 && ts != NULL && wall_clock(c)) {
		int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset();
		ts->tv_sec = ns / 1000000000LL;
		ts->tv_nsec = ns % 1000000000LL;
	}
	return r;
}

/* glibc declares the second argument void * from 2.31, struct timezone *
   before (with _GNU_SOURCE): match the header being compiled against. */
#if defined(__GLIBC__) && !__GLIBC_PREREQ(2, 31)
int gettimeofday(struct timeval *tv, struct timezone *tz) {
#else
int gettimeofday(struct timeval *tv, void *tz) {
#endif
	int r = real_gettimeofday ? real_gettimeofday(tv, tz) : (int)syscall(SYS_gettimeofday, tv, tz);
	if (r == 0 && tv != NULL) {
		int64_t us = (int64_t)tv->tv_sec * 1000000LL + tv->tv_usec + offset() / 1000;
		tv->tv_sec = us / 1000000LL;
		tv->tv_usec = us % 1000000LL;
	}
	return r;
}

time_t time(time_t *t) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t != NULL) {
		*t = ts.tv_sec;
	}
	return ts.tv_sec;
}
