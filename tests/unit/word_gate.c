/* tests/unit/word_gate.c — the spinner's node gate (interpose/word.h) on
 * one thread: a free word last owned by another node is left alone for
 * exactly the grace, and not at all when the owner is of our node or not
 * known, when the gate's deadline has passed, or without a gate. */
#include <stdatomic.h>
#include <stdint.h>

#include "../check.h"
#include "cna.h"
#include "word.h"

#define OUR_NODE 1u     /* node 0, plus one */
#define OTHER_NODE 2u   /* node 1, plus one */
#define BUDGET 100

static _Atomic uint32_t owner_slot;

static struct word_gate gate_for(uint32_t owner, uint64_t defer_until_ns)
{
	atomic_store(&owner_slot, owner);
	return (struct word_gate){ .owner_node = &owner_slot, .mine = OUR_NODE,
				   .defer_until_ns = defer_until_ns };
}

/* Spin on a free word through gate: it must be taken, after deferrals yields. */
static void takes_free_word(struct word_gate *gate, unsigned deferrals, const char *what)
{
	_Atomic uint32_t word = WORD_FREE;
	bool won = word_spin_lock(&word, BUDGET, gate);
	if (!won || (gate && gate->deferrals != deferrals))
		fprintf(stderr, "word-gate: %s\n", what);
	CHECK(won);
	CHECK_EQ(atomic_load(&word), WORD_HELD);
	if (gate)
		CHECK_EQ(gate->deferrals, deferrals);
}

int main(void)
{
	uint64_t far = cna_now_ns() + 3600ull * 1000000000u;

	struct word_gate remote = gate_for(OTHER_NODE, far);
	takes_free_word(&remote, 1, "a remote owner's word is deferred once, then taken");
	CHECK(!remote.expired);

	struct word_gate local = gate_for(OUR_NODE, far);
	takes_free_word(&local, 0, "our own node's word is taken at once");

	struct word_gate unknown = gate_for(0, far);
	takes_free_word(&unknown, 0, "an unknown owner's word is taken at once");

	struct word_gate late = gate_for(OTHER_NODE, cna_now_ns());
	takes_free_word(&late, 0, "past the deadline the gate is open");
	CHECK(late.expired);

	takes_free_word(NULL, 0, "no gate: taken at once");

	/* A word that stays held: no deferral is counted, the spin gives up. */
	_Atomic uint32_t held = WORD_HELD;
	struct word_gate waiting = gate_for(OTHER_NODE, far);
	CHECK(!word_spin_lock(&held, BUDGET, &waiting));
	CHECK_EQ(waiting.deferrals, 0);
	CHECK_EQ(atomic_load(&held), WORD_HELD);

	/* A newcomer's spin still stops at a word somebody waits on. */
	_Atomic uint32_t waited = WORD_HELD_SLEEPERS;
	struct word_gate newcomer = gate_for(OTHER_NODE, far);
	CHECK_EQ(word_spin_unwaited(&waited, BUDGET, &newcomer), WORD_SPIN_WAITED_ON);

	return check_report("word-gate");
}
