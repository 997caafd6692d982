/* tests/ecosystem/probe.c — what a program started by the launcher sees.
 *
 * Prints its pid, LD_PRELOAD and the CNAMUTEX_* variables on stdout, takes
 * a mutex once, and exits with the status given as its argument.
 *
 *   probe [status]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../check.h"

static const char *const variables[] = {
	"LD_PRELOAD", "CNAMUTEX_NUMA", "CNAMUTEX_THRESHOLD_MS", "CNAMUTEX_SHUFFLE_BITS",
	"CNAMUTEX_SPIN", "CNAMUTEX_TOPOLOGY", "CNAMUTEX_STATS", "CNAMUTEX_PROFILE",
	"CNAMUTEX_LOG_FILE", "CNAMUTEX_REPORT_INTERVAL_S", "CNAMUTEX_CPU_BATCH",
};

int main(int argc, char **argv)
{
	check_running_under_shim();
	printf("pid=%ld\n", (long)getpid());
	for (size_t i = 0; i < sizeof variables / sizeof variables[0]; i++) {
		const char *value = getenv(variables[i]);
		printf("%s=%s\n", variables[i], value ? value : "(unset)");
	}
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	CHECK_EQ(pthread_mutex_lock(&m), 0);
	CHECK_EQ(pthread_mutex_unlock(&m), 0);
	if (check_failures)
		return 1;
	return argc > 1 ? atoi(argv[1]) : 0;
}
