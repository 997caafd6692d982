/* tests/unit/parsers.c — tunable_parse_uint() and topology_parse() on
 * tables of good and bad input.
 */
#include <stdbool.h>
#include <string.h>

#include "../check.h"
#include "topology.h"
#include "tunables.h"

struct uint_case {
	const char *text;
	unsigned min, max;
	bool ok;
	unsigned value;
};

static const struct uint_case uint_cases[] = {
	{ "10", 1, 100, true, 10 },
	{ "1", 1, 100, true, 1 },
	{ "100", 1, 100, true, 100 },
	{ "007", 0, 31, true, 7 },
	{ "0", 0, 31, true, 0 },
	{ "31", 0, 31, true, 31 },
	{ "4294967295", 0, 4294967295u, true, 4294967295u },
	{ "0", 1, 100, false, 0 },
	{ "101", 1, 100, false, 0 },
	{ "32", 0, 31, false, 0 },
	{ "4294967296", 0, 4294967295u, false, 0 },
	{ "99999999999999999999", 0, 4294967295u, false, 0 },
	{ "99999999999999999999999999999999999999999", 1, 100, false, 0 },
	{ "", 0, 100, false, 0 },
	{ "abc", 0, 100, false, 0 },
	{ "-5", 0, 100, false, 0 },
	{ "+5", 0, 100, false, 0 },
	{ " 5", 0, 100, false, 0 },
	{ "5 ", 0, 100, false, 0 },
	{ "\t5", 0, 100, false, 0 },
	{ "5\n", 0, 100, false, 0 },
	{ "10ms", 1, 100, false, 0 },
	{ "0x10", 0, 100, false, 0 },
	{ "1e2", 0, 1000, false, 0 },
	{ "5.0", 0, 100, false, 0 },
};

static void parse_uint_table(void)
{
	for (size_t i = 0; i < sizeof uint_cases / sizeof uint_cases[0]; i++) {
		const struct uint_case *c = &uint_cases[i];
		unsigned value = 12345;
		const char *reason = NULL;
		bool ok = tunable_parse_uint(c->text, c->min, c->max, &value, &reason);
		if (ok != c->ok)
			fprintf(stderr, "parse_uint(\"%s\", %u, %u) gave %d\n", c->text, c->min,
				c->max, ok);
		CHECK_EQ(ok, c->ok);
		if (c->ok) {
			CHECK_EQ(value, c->value);
		} else {
			CHECK(reason != NULL && reason[0] != '\0');
			CHECK_EQ(value, 12345);   /* untouched on failure */
		}
	}
}

struct topology_case {
	const char *spec;
	bool ok;
};

static const struct topology_case topology_cases[] = {
	{ "nodes=2", true },
	{ "nodes=1", true },
	{ "nodes=1024", true },
	{ "threads=2", true },
	{ "threads=4", true },
	{ "cpus=0/1", true },
	{ "cpus=0-3,8/4-7", true },
	{ "cpus=0,1,2/3", true },
	{ "cpus=4095", true },
	{ "", false },
	{ "abc", false },
	{ "-5", false },
	{ "5", false },
	{ "nodes", false },
	{ "nodes=", false },
	{ "nodes=0", false },
	{ "nodes=1025", false },
	{ "nodes=-5", false },
	{ "nodes=abc", false },
	{ "nodes= 2", false },
	{ "nodes=2 ", false },
	{ " nodes=2", false },
	{ "nodes=2x", false },
	{ "nodes=99999999999999999999", false },
	{ "threads=", false },
	{ "threads=0", false },
	{ "threads=10ms", false },
	{ "NODES=2", false },
	{ "cpus=", false },
	{ "cpus=3-1", false },
	{ "cpus=4096", false },
	{ "cpus=0-99999999999999999999", false },
	{ "cpus=0/", false },
	{ "cpus=0,/1", false },
	{ "cpus=0-/1", false },
	{ "cpus=0 /1", false },
	{ "cpus=a/b", false },
};

static void topology_table(void)
{
	for (size_t i = 0; i < sizeof topology_cases / sizeof topology_cases[0]; i++) {
		const struct topology_case *c = &topology_cases[i];
		const char *reason = NULL;
		bool ok = topology_parse(c->spec, &reason);
		if (ok != c->ok)
			fprintf(stderr, "topology_parse(\"%s\") gave %d\n", c->spec, ok);
		CHECK_EQ(ok, c->ok);
		if (!c->ok)
			CHECK(reason != NULL && reason[0] != '\0');
	}
}

int main(void)
{
	parse_uint_table();
	topology_table();
	return check_report("parsers");
}
