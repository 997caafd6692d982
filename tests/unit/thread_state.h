/* tests/unit/thread_state.h — a thread of ours as the kernel sees it. */
#ifndef TESTS_UNIT_THREAD_STATE_H
#define TESTS_UNIT_THREAD_STATE_H

#include <stdio.h>
#include <string.h>
#include <sys/types.h>

/* State letter of a thread of ours ('S': asleep, e.g. in a futex wait), or '?'. */
static inline char thread_state(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return '?';
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
}

#endif
