/* tests/unit/word_spinner.c — the one-newcomer-spins claim of word_spinner.h:
 * one claimant at a time, free again on release or once stale, and never
 * touching the fields glibc and the owner slot use.  Clock values are
 * passed in, so nothing here depends on timing.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "../check.h"
#include "glibc_mutex.h"
#include "locality.h"
#include "word_spinner.h"

#define TICK (UINT64_C(1) << WORD_SPINNER_TICK_SHIFT)
#define T0 (UINT64_C(5) * 1000000000u)   /* some monotonic time, in ns */

static void one_claimant_at_a_time(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK(word_spinner_try_claim(&m, T0));
	CHECK(!word_spinner_try_claim(&m, T0));
	CHECK(!word_spinner_try_claim(&m, T0 + 10 * TICK));
	word_spinner_release(&m);
	CHECK(word_spinner_try_claim(&m, T0 + 11 * TICK));
}

static void stale_claim_is_taken_over(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK(word_spinner_try_claim(&m, T0));
	/* A claimant preempted for long, or one that was only in a fork's parent. */
	CHECK(!word_spinner_try_claim(&m, T0 + (WORD_SPINNER_STALE_TICKS - 2) * TICK));
	CHECK(word_spinner_try_claim(&m, T0 + (WORD_SPINNER_STALE_TICKS + 1) * TICK));
	/* ... and the new claim is fresh for the next newcomer. */
	CHECK(!word_spinner_try_claim(&m, T0 + (WORD_SPINNER_STALE_TICKS + 2) * TICK));
}

static void claim_survives_clock_wrap_of_its_ticks(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	/* The tick's 32 bits wrap every ~73 minutes of nanoseconds >> 10. */
	uint64_t before_wrap = (UINT64_C(1) << (32 + WORD_SPINNER_TICK_SHIFT)) - 3 * TICK;
	CHECK(word_spinner_try_claim(&m, before_wrap));
	CHECK(!word_spinner_try_claim(&m, before_wrap + 6 * TICK));
	CHECK(word_spinner_try_claim(&m, before_wrap + (WORD_SPINNER_STALE_TICKS + 4) * TICK));
}

static void leaves_glibc_fields_and_owner_slot_alone(void)
{
	pthread_mutex_t m;
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&m, &attr);
	pthread_mutexattr_destroy(&attr);
	atomic_store(mutex_owner_slot(&m), 0x12345u);
	pthread_mutex_t before;
	memcpy(&before, &m, sizeof m);

	CHECK(word_spinner_try_claim(&m, T0));
	CHECK(atomic_load(word_spinner_claim(&m)) != 0);
	word_spinner_release(&m);
	CHECK_EQ(atomic_load(word_spinner_claim(&m)), 0);
	CHECK(memcmp(&before, &m, sizeof m) == 0);
	CHECK_EQ(atomic_load(mutex_owner_slot(&m)), 0x12345u);
	CHECK_EQ(m.__data.__kind, before.__data.__kind);
	atomic_store(mutex_owner_slot(&m), 0);
	CHECK_EQ(pthread_mutex_destroy(&m), 0);
}

int main(void)
{
	one_claimant_at_a_time();
	stale_claim_is_taken_over();
	claim_survives_clock_wrap_of_its_ticks();
	leaves_glibc_fields_and_owner_slot_alone();
	return check_report("word-spinner");
}
