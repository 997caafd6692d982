/* bench/sim/fiber.c — switching between simulated threads' stacks.
 *
 * A hand-written switch of the callee-saved registers (System V x86-64):
 * glibc's swapcontext() also saves the signal mask with a syscall, which
 * would cost more than the simulated event it switches for.
 */
#include "engine.h"

#include <string.h>

#define FIBER_STACK_BYTES (128 * 1024)

_Static_assert(sizeof(void *) == 8, "x86-64 only (bench/sim/meson.build)");

/* void sim_fiber_switch(void **save_sp, void *next_sp) */
__asm__(".text\n"
	".globl sim_fiber_switch\n"
	".type sim_fiber_switch, @function\n"
	"sim_fiber_switch:\n"
	"\tpushq %rbp\n\tpushq %rbx\n\tpushq %r12\n\tpushq %r13\n\tpushq %r14\n\tpushq %r15\n"
	"\tmovq %rsp, (%rdi)\n"
	"\tmovq %rsi, %rsp\n"
	"\tpopq %r15\n\tpopq %r14\n\tpopq %r13\n\tpopq %r12\n\tpopq %rbx\n\tpopq %rbp\n"
	"\tret\n"
	".size sim_fiber_switch, .-sim_fiber_switch\n");

/* The first switch to t "returns" into entry with an ABI-aligned stack. */
void sim_fiber_init(struct sim_thread *t, void (*entry)(void))
{
	uintptr_t top = ((uintptr_t)t->stack + FIBER_STACK_BYTES) & ~(uintptr_t)15;
	void **sp = (void **)top;
	*--sp = NULL;                  /* entry's return address: it never returns */
	*--sp = (void *)entry;
	for (int i = 0; i < 6; i++)
		*--sp = NULL;          /* rbp rbx r12 r13 r14 r15 */
	t->sp = sp;
}

size_t sim_fiber_stack_bytes(void)
{
	return FIBER_STACK_BYTES;
}
