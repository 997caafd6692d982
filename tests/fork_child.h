/* tests/fork_child.h — threads in the child of a multithreaded parent's fork(). */
#ifndef TESTS_FORK_CHILD_H
#define TESTS_FORK_CHILD_H

#include <pthread.h>
#include <sys/mman.h>

#include "check.h"

#define FORK_CHILD_STACK (1 << 20)

/*
 * pthread_create() with a stack of its own: glibc would otherwise hand the
 * child the cached stacks of the parent's threads, and ThreadSanitizer,
 * which still lists those threads, dies of a duplicate id.
 */
static inline void fork_child_thread_create(pthread_t *thread, void *(*start)(void *),
					    void *arg)
{
	pthread_attr_t attr;
	void *stack = mmap(NULL, FORK_CHILD_STACK, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	CHECK(stack != MAP_FAILED);
	CHECK_EQ(pthread_attr_init(&attr), 0);
	CHECK_EQ(pthread_attr_setstack(&attr, stack, FORK_CHILD_STACK), 0);
	CHECK_EQ(pthread_create(thread, &attr, start, arg), 0);
	pthread_attr_destroy(&attr);
}

#endif
