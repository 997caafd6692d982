/* interpose/real.c — lookup of the functions we interpose. */
#include "real.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct real_functions table;
static _Atomic int resolved;   /* 0 no, 1 yes */

static void *lookup(const char *name)
{
	void *fn = dlsym(RTLD_NEXT, name);
	if (!fn) {
		static const char msg[] = "cnamutex: cannot find the real ";
		ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
		ignored = write(STDERR_FILENO, name, strlen(name));
		ignored = write(STDERR_FILENO, "\n", 1);
		(void)ignored;
		abort();
	}
	return fn;
}

void real_resolve_all(void)
{
	/* Racing resolvers store the same pointers: harmless. */
	struct real_functions t;
	*(void **)&t.mutex_lock = lookup("pthread_mutex_lock");
	*(void **)&t.mutex_trylock = lookup("pthread_mutex_trylock");
	*(void **)&t.mutex_timedlock = lookup("pthread_mutex_timedlock");
	*(void **)&t.mutex_clocklock = lookup("pthread_mutex_clocklock");
	*(void **)&t.mutex_unlock = lookup("pthread_mutex_unlock");
	*(void **)&t.mutex_init = lookup("pthread_mutex_init");
	*(void **)&t.mutex_destroy = lookup("pthread_mutex_destroy");
	*(void **)&t.mutex_consistent = lookup("pthread_mutex_consistent");
	*(void **)&t.mutex_getprioceiling = lookup("pthread_mutex_getprioceiling");
	*(void **)&t.mutex_setprioceiling = lookup("pthread_mutex_setprioceiling");
	*(void **)&t.setschedparam = lookup("pthread_setschedparam");
	*(void **)&t.sched_setscheduler = lookup("sched_setscheduler");
	if (!atomic_load_explicit(&resolved, memory_order_acquire)) {
		table = t;
		/* Release: pairs with the acquire load in real(). */
		atomic_store_explicit(&resolved, 1, memory_order_release);
	}
}

const struct real_functions *real(void)
{
	/* Acquire: pairs with the release store in real_resolve_all(). */
	if (__builtin_expect(!atomic_load_explicit(&resolved, memory_order_acquire), 0))
		real_resolve_all();
	return &table;
}
