/* tests/torture/tsan_glibc.h — tell ThreadSanitizer what glibc does unseen.
 *
 * pthread_cond_*wait unlock and relock the mutex inside glibc, which is not
 * instrumented, while the shim's own lock and unlock are plain instrumented
 * atomics on the mutex word.  So ThreadSanitizer sees the shim's acquire of
 * a word that a condition wait released but not the release itself, and
 * reports the next owner's writes as races.  Around every condition wait we
 * state the release and the acquire glibc performs on that same word.
 */
#ifndef TESTS_TORTURE_TSAN_GLIBC_H
#define TESTS_TORTURE_TSAN_GLIBC_H

#include <pthread.h>

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
/* The wait is about to release m inside glibc. */
static inline void glibc_will_unlock(pthread_mutex_t *m) { __tsan_release(m); }
/* The wait returned (or is being cancelled) holding m again. */
static inline void glibc_relocked(pthread_mutex_t *m) { __tsan_acquire(m); }
#else
static inline void glibc_will_unlock(pthread_mutex_t *m) { (void)m; }
static inline void glibc_relocked(pthread_mutex_t *m) { (void)m; }
#endif

#endif
