/* tests/binding.c — a freshly built program's mutex references bind to the shim.
 *
 * The program is built against today's glibc, so its references carry
 * version nodes (pthread_mutex_lock@GLIBC_2.2.5, pthread_mutex_clocklock
 * @GLIBC_2.30, mtx_lock@GLIBC_2.28, ...).  The shim defines them
 * unversioned; this checks both the addresses the program itself resolved
 * and what dlsym(RTLD_DEFAULT) finds.
 */
#include <pthread.h>
#include <threads.h>

#include "check.h"

static void expect_shim(const char *name, void *resolved_by_program)
{
	Dl_info info;
	int found = dladdr(resolved_by_program, &info);
	CHECK(found && info.dli_fname && strstr(info.dli_fname, "libcnamutex"));
	if (found && info.dli_fname)
		printf("%-30s -> %s\n", name, info.dli_fname);
	CHECK(strstr(check_defining_object(name), "libcnamutex") != NULL);
}

int main(void)
{
	/* Function addresses taken here go through the program's own GOT. */
	expect_shim("pthread_mutex_lock", (void *)pthread_mutex_lock);
	expect_shim("pthread_mutex_trylock", (void *)pthread_mutex_trylock);
	expect_shim("pthread_mutex_timedlock", (void *)pthread_mutex_timedlock);
	expect_shim("pthread_mutex_clocklock", (void *)pthread_mutex_clocklock);
	expect_shim("pthread_mutex_unlock", (void *)pthread_mutex_unlock);
	expect_shim("pthread_mutex_init", (void *)pthread_mutex_init);
	expect_shim("pthread_mutex_destroy", (void *)pthread_mutex_destroy);
	expect_shim("pthread_mutex_consistent", (void *)pthread_mutex_consistent);
	expect_shim("pthread_mutex_getprioceiling", (void *)pthread_mutex_getprioceiling);
	expect_shim("pthread_mutex_setprioceiling", (void *)pthread_mutex_setprioceiling);
	expect_shim("mtx_lock", (void *)mtx_lock);
	expect_shim("mtx_trylock", (void *)mtx_trylock);
	expect_shim("mtx_timedlock", (void *)mtx_timedlock);
	expect_shim("mtx_unlock", (void *)mtx_unlock);

	/* Nothing else leaks out of the shim. */
	void *shim = dlopen(NULL, RTLD_NOW);
	CHECK(shim != NULL);
	CHECK(dlsym(RTLD_DEFAULT, "cnamutex_lock") == NULL);
	CHECK(dlsym(RTLD_DEFAULT, "queue_table_acquire") == NULL);
	CHECK(dlsym(RTLD_DEFAULT, "cna_pass_head") == NULL);
	return check_report("binding");
}
