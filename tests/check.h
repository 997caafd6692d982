/* tests/check.h — tiny test harness: checks that always run (never assert()). */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                              \
			check_failures++;                                      \
		}                                                              \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);\
		if (check_a_ != check_b_) {                                    \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_); \
			check_failures++;                                      \
		}                                                              \
	} while (0)

/* Name of the object that defines symbol for the program, or "?". */
static inline const char *check_defining_object(const char *symbol)
{
	void *fn = dlsym(RTLD_DEFAULT, symbol);
	Dl_info info;
	if (!fn || !dladdr(fn, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

/* Fail unless the test really runs under the shim (LD_PRELOAD set by meson). */
static inline void check_running_under_shim(void)
{
	const char *where = check_defining_object("pthread_mutex_lock");
	if (!strstr(where, "libcnamutex")) {
		fprintf(stderr, "not running under libcnamutex (pthread_mutex_lock from %s)\n",
			where);
		exit(2);
	}
}

static inline int check_report(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
		return 1;
	}
	printf("%s: ok\n", name);
	return 0;
}

#endif
