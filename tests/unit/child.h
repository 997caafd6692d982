/* tests/unit/child.h — run this test program again as a child process with
 * a chosen CNAMUTEX_* environment (the shim reads it once, at load) and
 * capture what the child writes to stderr.
 */
#ifndef TESTS_UNIT_CHILD_H
#define TESTS_UNIT_CHILD_H

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Seconds on the monotonic clock, for the tests that run for a while. */
static inline double child_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define CHILD_STDERR_MAX 16384
#define CHILD_ENV_MAX 256

struct child_result {
	int exit_code;                  /* -1 unless it exited normally */
	char err[CHILD_STDERR_MAX + 1]; /* the captured stream, NUL-terminated */
};

/* The child's standard streams. */
enum child_streams {
	CHILD_CAPTURE_STDERR,        /* stderr captured, stdout to /dev/null */
	CHILD_CAPTURE_STDOUT_CLOSED_STDERR, /* stdout captured, stderr closed */
};

/*
 * Run /proc/self/exe with argv and the parent's environment minus every
 * CNAMUTEX_* variable, plus the "NAME=VALUE" strings of set (NULL-ended),
 * its streams set up as streams says.  Returns false if it could not run.
 */
static inline bool child_run_streams(char *const argv[], const char *const set[],
				     enum child_streams streams, struct child_result *out)
{
	char *envp[CHILD_ENV_MAX + 1];
	size_t n = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "CNAMUTEX_", 9) != 0) {
			if (n == CHILD_ENV_MAX)
				return false;   /* never run it with part of its environment */
			envp[n++] = *e;
		}
	for (const char *const *s = set; *s; s++) {
		if (n == CHILD_ENV_MAX)
			return false;
		envp[n++] = (char *)*s;
	}
	envp[n] = NULL;

	int pipe_fds[2];
	if (pipe2(pipe_fds, O_CLOEXEC) != 0)
		return false;
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	if (streams == CHILD_CAPTURE_STDERR) {
		posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
		posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	} else {
		posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
		posix_spawn_file_actions_addclose(&actions, STDERR_FILENO);
	}
	pid_t pid;
	int err = posix_spawn(&pid, "/proc/self/exe", &actions, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&actions);
	close(pipe_fds[1]);
	if (err) {
		close(pipe_fds[0]);
		return false;
	}

	size_t len = 0;
	for (;;) {
		char sink[512];
		char *into = len < CHILD_STDERR_MAX ? out->err + len : sink;
		size_t room = len < CHILD_STDERR_MAX ? CHILD_STDERR_MAX - len : sizeof sink;
		ssize_t got = read(pipe_fds[0], into, room);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		if (into != sink)
			len += (size_t)got;
	}
	out->err[len] = '\0';
	close(pipe_fds[0]);

	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return true;
}

/* child_run_streams() with stderr captured and stdout to /dev/null. */
static inline bool child_run(char *const argv[], const char *const set[],
			     struct child_result *out)
{
	return child_run_streams(argv, set, CHILD_CAPTURE_STDERR, out);
}

/*
 * child_run() with this process's own CNAMUTEX_* settings carried over and
 * statistics on (CNAMUTEX_STATS=1 in place of any CNAMUTEX_STATS): the same
 * run again, to read its statistics line.
 */
static inline bool child_run_with_stats(char *const argv[], struct child_result *out)
{
	static const char stats_on[] = "CNAMUTEX_STATS=1";
	const char *set[CHILD_ENV_MAX + 1];
	size_t n = 0;
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, "CNAMUTEX_", 9) && strncmp(*e, "CNAMUTEX_STATS=", 15)) {
			if (n == CHILD_ENV_MAX - 1)
				return false;
			set[n++] = *e;
		}
	set[n++] = stats_on;
	set[n] = NULL;
	return child_run(argv, set, out);
}

/* Lines of text that start with prefix; *first set to the first of them. */
static inline int child_lines_starting(const char *text, const char *prefix,
				       const char **first)
{
	int count = 0;
	size_t plen = strlen(prefix);
	for (const char *line = text; *line;) {
		if (!strncmp(line, prefix, plen)) {
			if (!count && first)
				*first = line;
			count++;
		}
		const char *nl = strchr(line, '\n');
		if (!nl)
			break;
		line = nl + 1;
	}
	return count;
}

/* Lines in text (a last line without '\n' counts too). */
static inline int child_line_count(const char *text)
{
	return child_lines_starting(text, "", NULL);
}


/* The child's job in the tunable tests: two threads take one mutex
 * CHILD_WORKOUT_ROUNDS times each, the owner yielding now and then so
 * that the other one waits, so a harmed shim shows. */
#include <pthread.h>
#include <sched.h>

#include "../check.h"

#define CHILD_WORKOUT_THREADS 2
#define CHILD_WORKOUT_ROUNDS 2000
#define CHILD_WORKOUT_YIELD_EVERY 8

static pthread_mutex_t child_workout_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long child_workout_counter;

static void *child_workout_hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < CHILD_WORKOUT_ROUNDS; i++) {
		CHECK_EQ(pthread_mutex_lock(&child_workout_mutex), 0);
		child_workout_counter++;
		if (i % CHILD_WORKOUT_YIELD_EVERY == 0)
			sched_yield();
		CHECK_EQ(pthread_mutex_unlock(&child_workout_mutex), 0);
	}
	return NULL;
}

static inline int child_mutex_workout(const char *name)
{
	check_running_under_shim();
	pthread_t threads[CHILD_WORKOUT_THREADS];
	for (int i = 0; i < CHILD_WORKOUT_THREADS; i++)
		CHECK_EQ(pthread_create(&threads[i], NULL, child_workout_hammer, NULL), 0);
	for (int i = 0; i < CHILD_WORKOUT_THREADS; i++)
		CHECK_EQ(pthread_join(threads[i], NULL), 0);
	CHECK_EQ(child_workout_counter,
		 (unsigned long)CHILD_WORKOUT_THREADS * CHILD_WORKOUT_ROUNDS);
	return check_report(name);
}

#endif
