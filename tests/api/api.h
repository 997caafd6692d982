/* tests/api/api.h — shared helpers of the API-semantics tests.
 *
 * Every expectation here is glibc's own behaviour.  To prove it, meson runs
 * some programs a second time without the shim, with
 * CNAMUTEX_API_REFERENCE=glibc: then the program insists on NOT running
 * under the shim and checks the very same results against glibc.
 */
#ifndef TESTS_API_API_H
#define TESTS_API_API_H

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "../check.h"

/* Sanitized builds are 5-20x slower: shrink loop counts by this much. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define API_SCALE 8
#else
#define API_SCALE 1
#endif

/* Meson's "skipped" exit status. */
#define API_SKIP 77

static bool api_reference_run;

/* Check where pthread_mutex_lock comes from; true on a glibc reference run. */
static inline bool api_start(const char *name)
{
	const char *reference = getenv("CNAMUTEX_API_REFERENCE");
	if (reference && strcmp(reference, "glibc") == 0) {
		const char *where = check_defining_object("pthread_mutex_lock");
		if (strstr(where, "libcnamutex")) {
			fprintf(stderr, "%s: reference run, but the shim is loaded\n", name);
			exit(2);
		}
		printf("%s: reference run against glibc (%s)\n", name, where);
		api_reference_run = true;
		return true;
	}
	check_running_under_shim();
	return false;
}

/* Raw views of glibc's fields, to check the shim keeps them as glibc does. */
static inline int api_word(pthread_mutex_t *m)
{
	return __atomic_load_n(&m->__data.__lock, __ATOMIC_RELAXED);
}

static inline int api_owner(pthread_mutex_t *m)
{
	return __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
}

/*
 * Initialise m as the kind named: "default" (no attributes: glibc's kind 0,
 * the shim's fastest path), "normal" (type set explicitly, which glibc
 * marks no-elision: kind 512), "adaptive", "errorcheck", "recursive".
 * Returns the type, or -1 for an unknown name.
 */
static inline int api_init_kind(pthread_mutex_t *m, const char *name)
{
	static const struct { const char *name; int type; } kinds[] = {
		{ "normal", PTHREAD_MUTEX_NORMAL },
		{ "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP },
		{ "errorcheck", PTHREAD_MUTEX_ERRORCHECK },
		{ "recursive", PTHREAD_MUTEX_RECURSIVE },
	};
	if (strcmp(name, "default") == 0) {
		CHECK_EQ(pthread_mutex_init(m, NULL), 0);
		CHECK_EQ(m->__data.__kind, 0);
		return PTHREAD_MUTEX_NORMAL;
	}
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (strcmp(name, kinds[i].name) != 0)
			continue;
		pthread_mutexattr_t attr;
		CHECK_EQ(pthread_mutexattr_init(&attr), 0);
		CHECK_EQ(pthread_mutexattr_settype(&attr, kinds[i].type), 0);
		CHECK_EQ(pthread_mutex_init(m, &attr), 0);
		pthread_mutexattr_destroy(&attr);
		return kinds[i].type;
	}
	return -1;
}

/* a + ms milliseconds, normalised. */
static inline struct timespec api_ts_add_ms(struct timespec a, long ms)
{
	a.tv_sec += ms / 1000;
	a.tv_nsec += (ms % 1000) * 1000000L;
	if (a.tv_nsec >= 1000000000L) {
		a.tv_sec++;
		a.tv_nsec -= 1000000000L;
	}
	return a;
}

static inline struct timespec api_deadline_ms(clockid_t clock, long ms)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return api_ts_add_ms(now, ms);
}

/* The clock has reached the deadline. */
static inline bool api_reached(clockid_t clock, struct timespec deadline)
{
	struct timespec now;
	clock_gettime(clock, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec >= deadline.tv_nsec);
}

/*
 * A thread that locks a mutex and keeps it until told to let go, so the
 * caller can probe a mutex held by someone else.
 */
struct api_holder {
	pthread_t thread;
	pthread_mutex_t *mutex;
	long hold_ms;              /* > 0: let go by itself after this long */
	sem_t locked, release;
	int lock_result, unlock_result;
};

static void *api_holder_main(void *arg)
{
	struct api_holder *h = (struct api_holder *)arg;
	h->lock_result = pthread_mutex_lock(h->mutex);
	sem_post(&h->locked);
	if (h->hold_ms > 0) {
		struct timespec pause = { h->hold_ms / 1000, (h->hold_ms % 1000) * 1000000L };
		nanosleep(&pause, NULL);
	} else {
		while (sem_wait(&h->release) != 0)
			;
	}
	h->unlock_result = pthread_mutex_unlock(h->mutex);
	return NULL;
}

/* Returns once the holder owns m. */
static inline void api_holder_start(struct api_holder *h, pthread_mutex_t *m, long hold_ms)
{
	h->mutex = m;
	h->hold_ms = hold_ms;
	sem_init(&h->locked, 0, 0);
	sem_init(&h->release, 0, 0);
	CHECK_EQ(pthread_create(&h->thread, NULL, api_holder_main, h), 0);
	while (sem_wait(&h->locked) != 0)
		;
	CHECK_EQ(h->lock_result, 0);
}

static inline void api_holder_stop(struct api_holder *h)
{
	if (h->hold_ms <= 0)
		sem_post(&h->release);
	CHECK_EQ(pthread_join(h->thread, NULL), 0);
	CHECK_EQ(h->unlock_result, 0);
	sem_destroy(&h->locked);
	sem_destroy(&h->release);
}

/* Run op(m) on another thread and return its result. */
struct api_call {
	int (*op)(pthread_mutex_t *);
	pthread_mutex_t *mutex;
	int result;
};

static void *api_call_main(void *arg)
{
	struct api_call *c = (struct api_call *)arg;
	c->result = c->op(c->mutex);
	return NULL;
}

static inline int api_on_other_thread(int (*op)(pthread_mutex_t *), pthread_mutex_t *m)
{
	struct api_call call = { op, m, -1 };
	pthread_t t;
	if (pthread_create(&t, NULL, api_call_main, &call) != 0)
		return -1;
	pthread_join(t, NULL);
	return call.result;
}

/*
 * ThreadSanitizer and condition waits on a preloaded mutex.  glibc's
 * pthread_cond_*wait (and cnd_*wait) release and retake the mutex word
 * inside glibc, which is not instrumented, and TSan's condition-wait hooks
 * only release a mutex they saw locked — they never see the shim lock it.
 * So TSan misses the release of the word by the waiter.  These two calls
 * state the release and acquire glibc really performs on that word (at
 * offset 0 of the mutex, the address the shim's atomics use).
 */
#if defined(__SANITIZE_THREAD__)
#ifdef __cplusplus
extern "C" {
#endif
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#ifdef __cplusplus
}
#endif
static inline void api_wait_releases(void *mutex) { __tsan_release(mutex); }
static inline void api_wait_reacquired(void *mutex) { __tsan_acquire(mutex); }
#else
static inline void api_wait_releases(void *mutex) { (void)mutex; }
static inline void api_wait_reacquired(void *mutex) { (void)mutex; }
#endif

#endif
