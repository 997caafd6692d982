/* tests/api/passthrough.c — the kinds the shim hands to glibc still work.
 *
 * Usage: passthrough robust|pi|pshared|pp
 *   robust   owner dies holding it: EOWNERDEAD, pthread_mutex_consistent,
 *            then normal; never made consistent: ENOTRECOVERABLE
 *   pi       PTHREAD_PRIO_INHERIT: lock, trylock, timedlock, errorcheck,
 *            exclusion under contention
 *   pshared  process-shared mutex in MAP_SHARED memory, contended by a
 *            parent and a child process, exclusion and no lost update
 *   pp       PTHREAD_PRIO_PROTECT: get/setprioceiling and the priority
 *            raised while held (skipped, status 77, if the kernel refuses
 *            real-time priorities)
 */
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "api.h"

static int op_trylock(pthread_mutex_t *m) { return pthread_mutex_trylock(m); }

static void init_with(pthread_mutex_t *m, int protocol, int robust, int pshared, int type)
{
	pthread_mutexattr_t attr;
	CHECK_EQ(pthread_mutexattr_init(&attr), 0);
	CHECK_EQ(pthread_mutexattr_setprotocol(&attr, protocol), 0);
	CHECK_EQ(pthread_mutexattr_setrobust(&attr, robust), 0);
	CHECK_EQ(pthread_mutexattr_setpshared(&attr, pshared), 0);
	CHECK_EQ(pthread_mutexattr_settype(&attr, type), 0);
	CHECK_EQ(pthread_mutex_init(m, &attr), 0);
	pthread_mutexattr_destroy(&attr);
}

/* --- exclusion counter shared by the contention parts --- */
struct counted {
	pthread_mutex_t mutex;
	long count;
	_Atomic int occupancy;
	_Atomic long overlaps;
};

static void counted_section(struct counted *c)
{
	if (atomic_fetch_add_explicit(&c->occupancy, 1, memory_order_relaxed) != 0)
		atomic_fetch_add_explicit(&c->overlaps, 1, memory_order_relaxed);
	long seen = c->count;
	if ((seen & 63) == 0)
		sched_yield();
	c->count = seen + 1;
	atomic_fetch_sub_explicit(&c->occupancy, 1, memory_order_relaxed);
}

struct counted_run {
	struct counted *counted;
	long iterations;
};

static void *counted_worker(void *arg)
{
	struct counted_run *run = arg;
	for (long i = 0; i < run->iterations; i++) {
		CHECK_EQ(pthread_mutex_lock(&run->counted->mutex), 0);
		counted_section(run->counted);
		CHECK_EQ(pthread_mutex_unlock(&run->counted->mutex), 0);
	}
	return NULL;
}

static void contend(struct counted *c, int threads_count, long iterations)
{
	pthread_t threads[8];
	struct counted_run run = { c, iterations };
	for (int t = 0; t < threads_count; t++)
		CHECK_EQ(pthread_create(&threads[t], NULL, counted_worker, &run), 0);
	for (int t = 0; t < threads_count; t++)
		CHECK_EQ(pthread_join(threads[t], NULL), 0);
	CHECK_EQ(c->count, threads_count * iterations);
	CHECK_EQ(atomic_load_explicit(&c->overlaps, memory_order_relaxed), 0);   /* after the joins */
}

/* --- robust --- */
static void *lock_and_die(void *arg)
{
	pthread_mutex_t *m = arg;
	CHECK_EQ(pthread_mutex_lock(m), 0);
	return NULL;     /* exits holding m */
}

static void kill_owner(pthread_mutex_t *m)
{
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, lock_and_die, m), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

static int robust(void)
{
	static struct counted c;
	pthread_mutex_t *m = &c.mutex;
	init_with(m, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_ROBUST, PTHREAD_PROCESS_PRIVATE,
		  PTHREAD_MUTEX_NORMAL);

	kill_owner(m);
	CHECK_EQ(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(m), 0);

	kill_owner(m);
	CHECK_EQ(pthread_mutex_trylock(m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);

	kill_owner(m);
	struct timespec later = api_deadline_ms(CLOCK_REALTIME, 1000);
	CHECK_EQ(pthread_mutex_timedlock(m, &later), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_consistent(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);

	/* Contention on a robust mutex of its own: ThreadSanitizer's view of
	 * the one above is muddled by its owner-died history (its timedlock
	 * hook ignores EOWNERDEAD), and it would see no ordering there. */
	static struct counted contended;
	init_with(&contended.mutex, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_ROBUST,
		  PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_NORMAL);
	contend(&contended, 4, 20000 / API_SCALE);
	CHECK_EQ(pthread_mutex_destroy(&contended.mutex), 0);

	/* Unlocked without being made consistent: unusable for good. */
	kill_owner(m);
	CHECK_EQ(pthread_mutex_lock(m), EOWNERDEAD);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(pthread_mutex_lock(m), ENOTRECOVERABLE);
	CHECK_EQ(pthread_mutex_trylock(m), ENOTRECOVERABLE);
	CHECK_EQ(pthread_mutex_destroy(m), 0);
	return check_report("passthrough robust");
}

/* --- priority inheritance --- */
static int priority_inheritance(void)
{
	static struct counted c;
	pthread_mutex_t *m = &c.mutex;
	init_with(m, PTHREAD_PRIO_INHERIT, PTHREAD_MUTEX_STALLED, PTHREAD_PROCESS_PRIVATE,
		  PTHREAD_MUTEX_NORMAL);
	int err = pthread_mutex_lock(m);
	if (err == ENOTSUP || err == ENOSYS) {
		printf("passthrough pi: skipped, the kernel has no PI futexes (%s)\n",
		       strerror(err));
		return API_SKIP;
	}
	CHECK_EQ(err, 0);
	/* A PI mutex's word holds the owner's tid: glibc's protocol, not ours. */
	CHECK_EQ(api_word(m) & 0x3fffffff, gettid());
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	CHECK_EQ(pthread_mutex_trylock(m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(api_word(m), 0);

	struct api_holder holder;
	api_holder_start(&holder, m, 0);
	struct timespec soon = api_deadline_ms(CLOCK_REALTIME, 20);
	CHECK_EQ(pthread_mutex_timedlock(m, &soon), ETIMEDOUT);
	CHECK(api_reached(CLOCK_REALTIME, soon));
	api_holder_stop(&holder);

	contend(&c, 4, 20000 / API_SCALE);
	CHECK_EQ(pthread_mutex_destroy(m), 0);

	pthread_mutex_t checking;
	init_with(&checking, PTHREAD_PRIO_INHERIT, PTHREAD_MUTEX_STALLED,
		  PTHREAD_PROCESS_PRIVATE, PTHREAD_MUTEX_ERRORCHECK);
	CHECK_EQ(pthread_mutex_lock(&checking), 0);
	CHECK_EQ(pthread_mutex_lock(&checking), EDEADLK);
	CHECK_EQ(pthread_mutex_unlock(&checking), 0);
	CHECK_EQ(pthread_mutex_unlock(&checking), EPERM);
	CHECK_EQ(pthread_mutex_destroy(&checking), 0);
	return check_report("passthrough pi");
}

/* --- process-shared --- */
static int process_shared(void)
{
	struct counted *c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	init_with(&c->mutex, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED, PTHREAD_PROCESS_SHARED,
		  PTHREAD_MUTEX_NORMAL);
	long iterations = 50000 / API_SCALE;
	fflush(stdout);
	pid_t child = fork();
	CHECK(child >= 0);
	if (child < 0)
		return 1;
	for (long i = 0; i < iterations; i++) {
		CHECK_EQ(pthread_mutex_lock(&c->mutex), 0);
		counted_section(c);
		CHECK_EQ(pthread_mutex_unlock(&c->mutex), 0);
	}
	if (child == 0)
		_exit(check_failures ? 1 : 0);
	int status;
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(c->count, 2 * iterations);
	CHECK_EQ(atomic_load_explicit(&c->overlaps, memory_order_relaxed), 0);   /* after waitpid */
	CHECK_EQ(pthread_mutex_trylock(&c->mutex), 0);
	CHECK_EQ(pthread_mutex_unlock(&c->mutex), 0);
	CHECK_EQ(pthread_mutex_destroy(&c->mutex), 0);
	munmap(c, sizeof *c);
	return check_report("passthrough pshared");
}

/* --- priority protection, on a SCHED_FIFO thread --- */
/* The kernel's view (glibc's pthread_getschedparam reports the base). */
static int current_priority(void)
{
	struct sched_param param;
	CHECK_EQ(sched_getparam(0, &param), 0);
	return param.sched_priority;
}

static void *priority_protect(void *arg)
{
	int *skip = arg;
	int base = sched_get_priority_min(SCHED_FIFO);
	struct sched_param param = { .sched_priority = base };
	int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
	if (err) {
		printf("passthrough pp: skipped, the kernel refuses SCHED_FIFO (%s)\n",
		       strerror(err));
		*skip = 1;
		return NULL;
	}
	pthread_mutex_t m;
	pthread_mutexattr_t attr;
	CHECK_EQ(pthread_mutexattr_init(&attr), 0);
	CHECK_EQ(pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_PROTECT), 0);
	CHECK_EQ(pthread_mutexattr_setprioceiling(&attr, base + 1), 0);
	CHECK_EQ(pthread_mutex_init(&m, &attr), 0);
	pthread_mutexattr_destroy(&attr);

	int ceiling = -1, old = -1;
	CHECK_EQ(pthread_mutex_getprioceiling(&m, &ceiling), 0);
	CHECK_EQ(ceiling, base + 1);
	err = pthread_mutex_lock(&m);
	if (err == EPERM || err == EINVAL) {
		printf("passthrough pp: skipped, the kernel refuses the ceiling (%s)\n",
		       strerror(err));
		*skip = 1;
		pthread_mutex_destroy(&m);
		return NULL;
	}
	CHECK_EQ(err, 0);
	CHECK_EQ(current_priority(), base + 1);    /* raised to the ceiling */
	CHECK_EQ(api_on_other_thread(op_trylock, &m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(current_priority(), base);        /* and back */

	CHECK_EQ(pthread_mutex_setprioceiling(&m, base + 2, &old), 0);
	CHECK_EQ(old, base + 1);
	CHECK_EQ(pthread_mutex_getprioceiling(&m, &ceiling), 0);
	CHECK_EQ(ceiling, base + 2);
	CHECK_EQ(pthread_mutex_trylock(&m), 0);
	CHECK_EQ(current_priority(), base + 2);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	CHECK_EQ(current_priority(), base);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
	return NULL;
}

static int prio_protect(void)
{
	int skip = 0;
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, priority_protect, &skip), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	if (skip && !check_failures)
		return API_SKIP;
	return check_report("passthrough pp");
}

int main(int argc, char **argv)
{
	api_start("passthrough");
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "robust") == 0)
		return robust();
	if (strcmp(what, "pi") == 0)
		return priority_inheritance();
	if (strcmp(what, "pshared") == 0)
		return process_shared();
	if (strcmp(what, "pp") == 0)
		return prio_protect();
	fprintf(stderr, "usage: passthrough robust|pi|pshared|pp\n");
	return 2;
}
