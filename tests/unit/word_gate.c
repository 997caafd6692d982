/* tests/unit/word_gate.c — the waiter's gate (interpose/word.h) on one
 * thread: a free word last owned by another node or CPU is left alone for
 * the grace, which each deference that leaves the word idle lowers, and not
 * at all when the owner is of our domain or not known, when the level's
 * deadline has passed, or without a gate; a word marked by a starving
 * waiter is left alone longer, whoever owned it. */
#include <stdatomic.h>
#include <stdint.h>

#include "../check.h"
#include "cna.h"
#include "locality.h"
#include "word.h"

#define OUR_NODE 1u     /* node 0, plus one */
#define OTHER_NODE 2u   /* node 1, plus one */
#define BUDGET 100

static _Atomic uint32_t owner_slot;

#define OUR_CPU (5u << OWNER_CPU_SHIFT)     /* CPU 4, plus one */
#define OTHER_CPU (8u << OWNER_CPU_SHIFT)   /* CPU 7, plus one */

/* A gate at the node level only, as NUMA ordering on with no CPU batch. */
static struct word_gate gate_for(uint32_t owner, uint64_t defer_until_ns)
{
	atomic_store(&owner_slot, owner);
	return (struct word_gate){
		.owner_slot = &owner_slot,
		.node = { .mask = OWNER_NODE_MASK, .mine = OUR_NODE, .until_ns = defer_until_ns },
		.grace = WORD_GATE_GRACE_MAX,
	};
}

/* A gate at the CPU level only, as NUMA ordering off. */
static struct word_gate cpu_gate_for(uint32_t owner, uint64_t defer_until_ns, unsigned grace)
{
	atomic_store(&owner_slot, owner);
	return (struct word_gate){
		.owner_slot = &owner_slot,
		.cpu = { .mask = OWNER_CPU_MASK, .mine = OUR_CPU, .until_ns = defer_until_ns },
		.grace = grace,
	};
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

	/* Another node's owner: the grace plus 4 yields (word.c).  From grace
	 * 4, each deference that leaves the word idle lowers the grace, down to
	 * 0: 4+4, 3+4, 2+4, 1+4 allowed while 0, 1, 2, 3 were used, so the
	 * fourth deference is the last. */
	struct word_gate remote = gate_for(OTHER_NODE, far);
	takes_free_word(&remote, 4, "a remote owner's word is deferred four times as the grace falls");
	CHECK_EQ(remote.grace, WORD_GATE_GRACE_MIN);
	CHECK(!remote.node.expired);
	struct word_gate remote_learnt = gate_for(OTHER_NODE, far);
	remote_learnt.grace = WORD_GATE_GRACE_MIN;
	takes_free_word(&remote_learnt, 4, "at the lowest grace: 0+4 deferrals, then taken");
	CHECK_EQ(remote_learnt.grace, WORD_GATE_GRACE_MIN);

	struct word_gate local = gate_for(OUR_NODE, far);
	takes_free_word(&local, 0, "our own node's word is taken at once");

	struct word_gate unknown = gate_for(0, far);
	takes_free_word(&unknown, 0, "an unknown owner's word is taken at once");

	struct word_gate late = gate_for(OTHER_NODE, cna_now_ns());
	takes_free_word(&late, 0, "past the deadline the gate is open");
	CHECK(late.node.expired);

	/* The CPU level: the owner's node does not matter, its CPU does; no
	 * extra yields.  From grace 3: deferred (grace 2), deferred (grace 1),
	 * and the third sighting has used the grace. */
	struct word_gate cpu_remote = cpu_gate_for(OUR_NODE | OTHER_CPU, far, 3);
	takes_free_word(&cpu_remote, 2, "another CPU's word is deferred as the grace falls");
	/* At grace 0 only every 8th free word seen is deferred, once. */
	unsigned probed = 0;
	for (int i = 0; i < 16; i++) {
		struct word_gate cpu_learnt = cpu_gate_for(OTHER_CPU, far, 0);
		cpu_learnt.probes = (unsigned)i;
		_Atomic uint32_t word = WORD_FREE;
		CHECK(word_spin_lock(&word, BUDGET, &cpu_learnt));
		CHECK(cpu_learnt.deferrals <= 1);
		probed += cpu_learnt.deferrals;
	}
	CHECK_EQ(probed, 2);
	struct word_gate cpu_local = cpu_gate_for(OTHER_NODE | OUR_CPU, far, 4);
	takes_free_word(&cpu_local, 0, "our own CPU's word is taken at once");
	struct word_gate cpu_unknown = cpu_gate_for(OTHER_NODE, far, 4);
	takes_free_word(&cpu_unknown, 0, "a word whose owner's CPU is not known is taken at once");
	struct word_gate cpu_late = cpu_gate_for(OTHER_CPU, cna_now_ns(), 4);
	takes_free_word(&cpu_late, 0, "past the CPU batch the gate is open");
	CHECK(cpu_late.cpu.expired);

	takes_free_word(NULL, 0, "no gate: taken at once");

	struct word_gate starving = gate_for(OUR_NODE | OWNER_STARVING, far);
	takes_free_word(&starving, 4, "a starving waiter's mark: deferred four times, then taken");
	struct word_gate starving_late = gate_for(OTHER_NODE | OWNER_STARVING, cna_now_ns());
	takes_free_word(&starving_late, 0, "a waiter starving too does not defer");

	/* A word that stays held: no deferral is counted, the spin gives up,
	 * with the owner elsewhere too (it counts the rounds held, not the
	 * budget), and with a budget of 1 when the owner is of our node. */
	_Atomic uint32_t held = WORD_HELD;
	struct word_gate waiting = gate_for(OTHER_NODE, far);
	CHECK(!word_spin_lock(&held, BUDGET, &waiting));
	CHECK_EQ(waiting.deferrals, 0);
	CHECK_EQ(atomic_load(&held), WORD_HELD);
	struct word_gate waiting_cpu = cpu_gate_for(OTHER_CPU, far, 4);
	CHECK(!word_spin_lock(&held, 1, &waiting_cpu));
	struct word_gate waiting_local = gate_for(OUR_NODE, far);
	CHECK(!word_spin_lock(&held, 1, &waiting_local));
	CHECK_EQ(atomic_load(&held), WORD_HELD);

	/* A newcomer's spin still stops at a word somebody waits on. */
	_Atomic uint32_t waited = WORD_HELD_SLEEPERS;
	struct word_gate newcomer = gate_for(OTHER_NODE, far);
	CHECK_EQ(word_spin_unwaited(&waited, BUDGET, &newcomer), WORD_SPIN_WAITED_ON);

	return check_report("word-gate");
}
