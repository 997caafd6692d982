/* tests/unit/word_handoff.c — an owner hands the word to a starving waiter
 * (interpose/word_handoff.h), on the word module linked in directly.
 *
 * The protocol on one thread: an unlock that swaps out a 3 with our token
 * in the slot takes the word back (2) and grants it; in a forked child (a
 * claim of the parent's), with no claim, or on a 2 it frees it; only one
 * claimant at a time.  Then two threads: an owner that re-takes the word
 * the moment it frees it, as a hot loop does, against a waiter whose
 * deadline has passed.  Without handovers the waiter could lose every
 * race; with them it gets the word nearly every time it asks, and
 * exclusion holds (a counter changed only under the word).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../check.h"
#include "glibc_mutex.h"
#include "word.h"
#include "word_handoff.h"

#define WAITER_ROUNDS 2000

static void *nothing(void *arg)
{
	return arg;
}

/* word_unlock()'s plain path is for a process that never had a thread. */
static void leave_single_threaded(void)
{
	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, nothing, NULL), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK(!__libc_single_threaded);
}

static uint32_t word_value(pthread_mutex_t *m)
{
	return atomic_load(mutex_word(m));
}

static void unlock_hands_over_when_asked(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	_Atomic uint32_t *slot = mutex_handoff_slot(&m);
	CHECK(word_handoff_claim(slot, word_handoff_token()));
	CHECK(!word_handoff_claim(slot, word_handoff_token()));  /* one claimant at a time */
	atomic_store(mutex_word(&m), WORD_HELD_HANDOFF);
	word_unlock(mutex_word(&m), slot);
	CHECK_EQ(word_value(&m), WORD_HELD_SLEEPERS);  /* held again, for the claimant */
	CHECK(word_handoff_granted(slot));
	CHECK(!word_handoff_claim(slot, word_handoff_token()));  /* until the new owner is done */
	word_handoff_release(slot);
	CHECK(word_handoff_claim(slot, word_handoff_token()));
}

static void unlock_frees_without_a_request_of_ours(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	_Atomic uint32_t *slot = mutex_handoff_slot(&m);

	/* a 3 with no claim: as a 2 */
	atomic_store(mutex_word(&m), WORD_HELD_HANDOFF);
	word_unlock(mutex_word(&m), slot);
	CHECK_EQ(word_value(&m), WORD_FREE);
	CHECK(!word_handoff_granted(slot));

	/* a claim made before a fork, seen in the child */
	CHECK(word_handoff_claim(slot, word_handoff_token()));
	atomic_store(mutex_word(&m), WORD_HELD_HANDOFF);
	pid_t child = fork();
	if (child == 0) {
		/* The claimant does not exist here: the unlock frees the word,
		 * and the child's own waiters may claim the slot. */
		word_unlock(mutex_word(&m), slot);
		bool ok = word_value(&m) == WORD_FREE && !word_handoff_granted(slot) &&
			  word_handoff_claim(slot, word_handoff_token());
		_exit(ok ? 0 : 1);
	}
	CHECK(child > 0);
	int status = -1;
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	word_handoff_release(slot);
	atomic_store(mutex_word(&m), WORD_FREE);

	/* a 2 with a claim: the claimant has not asked (yet) */
	CHECK(word_handoff_claim(slot, word_handoff_token()));
	atomic_store(mutex_word(&m), WORD_HELD_SLEEPERS);
	word_unlock(mutex_word(&m), slot);
	CHECK_EQ(word_value(&m), WORD_FREE);
	CHECK(!word_handoff_granted(slot));
	word_handoff_release(slot);

	/* a bare word: no slot */
	atomic_store(mutex_word(&m), WORD_HELD_HANDOFF);
	word_unlock(mutex_word(&m), NULL);
	CHECK_EQ(word_value(&m), WORD_FREE);
}

static void token_never_reserved_values(void)
{
	CHECK(word_handoff_token() != WORD_HANDOFF_NONE);
	CHECK(word_handoff_token() != WORD_HANDOFF_GRANTED);
}

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static unsigned long inside;            /* changed only while holding hot's word */
static _Atomic bool waiter_done;
static _Atomic bool owner_started;

/* Re-take the word at once after every unlock, as a hot loop on one
 * thread does; now and then yield while holding it, so that the waiter
 * runs, finds it held and asks, even with both threads on one CPU. */
static void *hot_owner(void *arg)
{
	(void)arg;
	_Atomic uint32_t *word = mutex_word(&hot);
	unsigned long round = 0;
	while (!atomic_load_explicit(&waiter_done, memory_order_relaxed)) {
		while (!word_try_lock(word))
			cpu_relax();
		atomic_store_explicit(&owner_started, true, memory_order_relaxed);
		inside++;
		if (++round % 64 == 0)
			sched_yield();
		inside--;
		word_unlock(word, mutex_handoff_slot(&hot));
	}
	return NULL;
}

static void starving_waiter_is_handed_the_word(void)
{
	pthread_t owner;
	CHECK_EQ(pthread_create(&owner, NULL, hot_owner, NULL), 0);
	while (!atomic_load_explicit(&owner_started, memory_order_relaxed))
		sched_yield();
	_Atomic uint32_t *word = mutex_word(&hot);
	unsigned handed = 0, word_after_handover_ok = 0;
	for (int i = 0; i < WAITER_ROUNDS; i++) {
		/* deadline 0: past from the start */
		struct word_starving starving = { .slot = mutex_handoff_slot(&hot) };
		word_lock_sleeping(word, NULL, &starving);
		unsigned long before = inside;
		inside += 2;
		if (starving.handed) {
			handed++;
			/* the 3 is gone: the next unlock wakes the sleepers, if any */
			if (atomic_load(word) == WORD_HELD_SLEEPERS)
				word_after_handover_ok++;
		}
		inside -= 2;
		CHECK_EQ(inside, before);
		word_unlock(word, mutex_handoff_slot(&hot));
		/* Come back only once the owner has the word again, as a thread
		 * with work outside the lock would, instead of re-taking it. */
		while (atomic_load_explicit(word, memory_order_relaxed) == WORD_FREE)
			sched_yield();
	}
	atomic_store(&waiter_done, true);
	CHECK_EQ(pthread_join(owner, NULL), 0);
	CHECK_EQ(inside, 0);
	CHECK_EQ(word_value(&hot), WORD_FREE);
	CHECK_EQ(atomic_load(mutex_handoff_slot(&hot)), WORD_HANDOFF_NONE);
	/* Every acquisition was a handover or a free word taken; handovers
	 * happen whenever the owner held the word when we asked. */
	CHECK(handed > 0);
	CHECK_EQ(word_after_handover_ok, handed);
	printf("word-handoff: %u of %d acquisitions handed over\n", handed, WAITER_ROUNDS);
}

int main(void)
{
	leave_single_threaded();
	unlock_hands_over_when_asked();
	unlock_frees_without_a_request_of_ours();
	token_never_reserved_values();
	starving_waiter_is_handed_the_word();
	return check_report("word-handoff");
}
