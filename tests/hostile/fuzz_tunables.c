/* tests/hostile/fuzz_tunables.c — libFuzzer harness for the tunable parsers:
 * any bytes, as a C string, given to tunable_parse_uint over several ranges
 * and to topology_parse.  A success must be in range, digits only, and
 * survive a print-and-parse round trip; a refusal must say why.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "tunables.h"

#define FUZZ_MAX_TEXT 16384

/* Not assert(): the harness must check in every build. */
#define FUZZ_REQUIRE(cond)                                                     \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz_tunables: %s failed\n", #cond);  \
			abort();                                               \
		}                                                              \
	} while (0)

static const struct { unsigned min, max; } ranges[] = {
	{ 1, 100 }, { 0, 31 }, { 0, TUNABLE_SPIN_MAX }, { 0, UINT_MAX }, { 7, 7 },
};

static void check_uint(const char *text, unsigned min, unsigned max)
{
	unsigned value = 0xdeadbeefu;
	const char *reason = NULL;
	if (!tunable_parse_uint(text, min, max, &value, &reason)) {
		FUZZ_REQUIRE(reason != NULL && reason[0] != '\0');
		return;
	}
	FUZZ_REQUIRE(value >= min && value <= max);
	FUZZ_REQUIRE(text[0] != '\0' && strspn(text, "0123456789") == strlen(text));
	char printed[16];
	snprintf(printed, sizeof printed, "%u", value);
	unsigned again = 0;
	FUZZ_REQUIRE(tunable_parse_uint(printed, min, max, &again, &reason));
	FUZZ_REQUIRE(again == value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > FUZZ_MAX_TEXT)
		size = FUZZ_MAX_TEXT;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0'; /* an embedded NUL truncates, as in the environment */
	for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
		check_uint(text, ranges[r].min, ranges[r].max);
	const char *reason = NULL;
	if (!topology_parse(text, &reason))
		FUZZ_REQUIRE(reason != NULL && reason[0] != '\0');
	free(text);
	return 0;
}
