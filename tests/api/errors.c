/* tests/api/errors.c — error semantics of each CNA kind, exactly as glibc.
 *
 * Usage: errors KIND
 *   KIND: default normal adaptive errorcheck recursive
 *         static-normal static-adaptive static-errorcheck static-recursive
 * The static-* kinds use the static initializers with no init call.  Besides
 * the return values, the glibc fields (__lock, __owner, __count, __nusers)
 * must read as glibc leaves them.
 */
#include <limits.h>
#include <stdatomic.h>

#include "api.h"

static pthread_mutex_t static_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t static_adaptive = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t static_errorcheck = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t static_recursive = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

static int op_trylock(pthread_mutex_t *m) { return pthread_mutex_trylock(m); }
static int op_unlock(pthread_mutex_t *m) { return pthread_mutex_unlock(m); }

static void expect_free(pthread_mutex_t *m)
{
	CHECK_EQ(api_word(m), 0);
	CHECK_EQ(api_owner(m), 0);
	CHECK_EQ(m->__data.__nusers, 0);
}

static void expect_held_by_me(pthread_mutex_t *m)
{
	CHECK(api_word(m) != 0);
	CHECK_EQ(api_owner(m), gettid());
	CHECK_EQ(m->__data.__nusers, 1);
}

/* What every kind shares: lock, trylock, busy for others, fields. */
static void common_semantics(pthread_mutex_t *m, int type)
{
	CHECK_EQ(m->__data.__kind & 3, type);
	expect_free(m);

	CHECK_EQ(pthread_mutex_lock(m), 0);
	expect_held_by_me(m);
	CHECK_EQ(api_word(m), 1);          /* uncontended: 1, not 2 */
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	expect_held_by_me(m);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);

	CHECK_EQ(pthread_mutex_trylock(m), 0);
	expect_held_by_me(m);
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);

	/* A free mutex is lockable by another thread, and left free. */
	CHECK_EQ(api_on_other_thread(op_trylock, m), 0);
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	CHECK_EQ(api_owner(m) != 0, 1);
	/* (unlocked below by the kind's own rules) */
}

/* The mutex left locked by a finished thread: NORMAL/ADAPTIVE let anyone unlock. */
static void normal_semantics(pthread_mutex_t *m)
{
	/* glibc does no owner check on these kinds. */
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);

	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(pthread_mutex_trylock(m), EBUSY);   /* even by the owner */
	expect_held_by_me(m);
	CHECK_EQ(api_on_other_thread(op_unlock, m), 0);
	expect_free(m);
	CHECK_EQ(pthread_mutex_trylock(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);
}

static void errorcheck_semantics(pthread_mutex_t *m)
{
	/* Held by a thread that has exited: nobody else may unlock it. */
	CHECK_EQ(pthread_mutex_unlock(m), EPERM);
	CHECK(api_word(m) != 0);
	/* Clean up as the owner would have: clear the fields glibc's way. */
	m->__data.__owner = gettid();
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);

	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(pthread_mutex_lock(m), EDEADLK);
	CHECK_EQ(pthread_mutex_trylock(m), EBUSY);   /* not EDEADLK: glibc */
	expect_held_by_me(m);
	CHECK_EQ(api_on_other_thread(op_unlock, m), EPERM);
	expect_held_by_me(m);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);
	CHECK_EQ(pthread_mutex_unlock(m), EPERM);    /* unlocked */
	expect_free(m);
	CHECK_EQ(api_on_other_thread(op_unlock, m), EPERM);
	expect_free(m);
}

static void recursive_semantics(pthread_mutex_t *m)
{
	CHECK_EQ(pthread_mutex_unlock(m), EPERM);    /* owner has exited */
	m->__data.__owner = gettid();
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);
	CHECK_EQ(m->__data.__count, 0);

	/* Depth counting through lock and trylock. */
	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(m->__data.__count, 1);
	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(pthread_mutex_trylock(m), 0);
	CHECK_EQ(m->__data.__count, 3);
	expect_held_by_me(m);                        /* __nusers counts owners, not depth */
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	CHECK_EQ(api_on_other_thread(op_unlock, m), EPERM);
	CHECK_EQ(m->__data.__count, 3);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(m->__data.__count, 1);
	expect_held_by_me(m);
	CHECK_EQ(api_on_other_thread(op_trylock, m), EBUSY);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(m->__data.__count, 0);
	expect_free(m);
	CHECK_EQ(pthread_mutex_unlock(m), EPERM);    /* unlocked */
	expect_free(m);

	/* Count overflow: EAGAIN from every lock call, nothing changes. */
	CHECK_EQ(pthread_mutex_lock(m), 0);
	m->__data.__count = UINT_MAX - 1;
	CHECK_EQ(pthread_mutex_lock(m), 0);
	CHECK_EQ(m->__data.__count, UINT_MAX);
	CHECK_EQ(pthread_mutex_lock(m), EAGAIN);
	CHECK_EQ(pthread_mutex_trylock(m), EAGAIN);
	struct timespec later = api_deadline_ms(CLOCK_REALTIME, 1000);
	CHECK_EQ(pthread_mutex_timedlock(m, &later), EAGAIN);
	struct timespec later_mono = api_deadline_ms(CLOCK_MONOTONIC, 1000);
	CHECK_EQ(pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &later_mono), EAGAIN);
	CHECK_EQ(m->__data.__count, UINT_MAX);
	expect_held_by_me(m);
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	CHECK_EQ(m->__data.__count, UINT_MAX - 1);
	m->__data.__count = 1;
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);
	CHECK_EQ(api_on_other_thread(op_trylock, m), 0);
	m->__data.__owner = gettid();
	CHECK_EQ(pthread_mutex_unlock(m), 0);
	expect_free(m);
}

/* The static-* kinds, by name. */
static pthread_mutex_t *static_named(const char *name, int *type)
{
	static const struct { const char *name; pthread_mutex_t *mutex; int type; } kinds[] = {
		{ "static-normal", &static_normal, PTHREAD_MUTEX_NORMAL },
		{ "static-adaptive", &static_adaptive, PTHREAD_MUTEX_ADAPTIVE_NP },
		{ "static-errorcheck", &static_errorcheck, PTHREAD_MUTEX_ERRORCHECK },
		{ "static-recursive", &static_recursive, PTHREAD_MUTEX_RECURSIVE },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (strcmp(name, kinds[i].name) == 0) {
			*type = kinds[i].type;
			return kinds[i].mutex;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	api_start("errors");
	const char *name = argc > 1 ? argv[1] : "";
	pthread_mutex_t dynamic;
	int type;
	pthread_mutex_t *m = static_named(name, &type);
	if (!m) {
		type = api_init_kind(&dynamic, name);
		m = &dynamic;
	}
	if (type < 0) {
		fprintf(stderr, "usage: errors [static-]normal|adaptive|errorcheck|recursive, "
				"or default\n");
		return 2;
	}

	common_semantics(m, type);
	if (type == PTHREAD_MUTEX_ERRORCHECK)
		errorcheck_semantics(m);
	else if (type == PTHREAD_MUTEX_RECURSIVE)
		recursive_semantics(m);
	else
		normal_semantics(m);

	CHECK_EQ(pthread_mutex_destroy(m), 0);
	printf("errors %s: checked\n", name);
	return check_report("errors");
}
