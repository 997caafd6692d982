// hotpath: the uncontended pthread_mutex_lock/unlock pair, nothing else, for
// instruction counting under callgrind (scripts/hotpath-instructions).
//
//   hotpath ITERATIONS [--second-thread]
//
// With --second-thread an idle thread stays alive throughout, so the process
// is not single-threaded (glibc and the shim both take a cheaper path while
// only one thread exists).  Running it for two iteration counts and taking
// the difference of the totals cancels start-up and exit.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static int idle_pipe[2];

static void *idle_thread(void *arg)
{
	(void)arg;
	char byte;
	/* Blocks until main closes the write end. */
	while (read(idle_pipe[0], &byte, 1) > 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--second-thread"))) {
		fprintf(stderr, "usage: hotpath ITERATIONS [--second-thread]\n");
		return 2;
	}
	char *end;
	unsigned long iterations = strtoul(argv[1], &end, 10);
	if (*end || !iterations) {
		fprintf(stderr, "hotpath: bad iteration count %s\n", argv[1]);
		return 2;
	}
	pthread_t idle;
	int second = argc == 3;
	if (second && (pipe(idle_pipe) || pthread_create(&idle, NULL, idle_thread, NULL))) {
		perror("hotpath: second thread");
		return 2;
	}
	for (unsigned long i = 0; i < iterations; i++) {
		if (pthread_mutex_lock(&mutex) || pthread_mutex_unlock(&mutex)) {
			fprintf(stderr, "hotpath: lock/unlock failed\n");
			return 1;
		}
	}
	if (second) {
		close(idle_pipe[1]);
		pthread_join(idle, NULL);
	}
	return 0;
}
