/* tests/unit/stats_line.h — parse the shim's exit line
 * "cnamutex: stats key=value key=value ..." out of captured stderr.
 */
#ifndef TESTS_UNIT_STATS_LINE_H
#define TESTS_UNIT_STATS_LINE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATS_LINE_PREFIX "cnamutex: stats "
#define STATS_MAX_KEYS 32

struct stats_line {
	int keys;
	char key[STATS_MAX_KEYS][48];
	double value[STATS_MAX_KEYS];
};

/* True if text holds exactly one stats line and every field of it is
 * key=number; says what is wrong on stderr otherwise. */
static inline bool stats_line_find(const char *text, struct stats_line *out)
{
	out->keys = 0;
	const char *line = NULL;
	int lines = 0;
	size_t plen = strlen(STATS_LINE_PREFIX);
	for (const char *p = text; *p;) {
		if (!strncmp(p, STATS_LINE_PREFIX, plen)) {
			line = line ? line : p;
			lines++;
		}
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	if (lines != 1) {
		fprintf(stderr, "stats: %d lines starting \"%s\"\n", lines, STATS_LINE_PREFIX);
		return false;
	}
	const char *p = line + plen;
	while (*p && *p != '\n') {
		const char *eq = p + strcspn(p, "= \n");
		const char *end = p + strcspn(p, " \n");
		size_t klen = (size_t)(eq - p);
		if (*eq != '=' || klen == 0 || klen >= sizeof out->key[0] ||
		    out->keys == STATS_MAX_KEYS) {
			fprintf(stderr, "stats: bad field \"%.*s\"\n", (int)(end - p), p);
			return false;
		}
		char *number_end;
		double v = strtod(eq + 1, &number_end);
		if (number_end != end || end == eq + 1) {
			fprintf(stderr, "stats: bad value in \"%.*s\"\n", (int)(end - p), p);
			return false;
		}
		memcpy(out->key[out->keys], p, klen);
		out->key[out->keys][klen] = '\0';
		out->value[out->keys++] = v;
		p = *end == ' ' ? end + 1 : end;
	}
	return true;
}

/* The value of key, or -1 (and a complaint) if the line lacks it. */
static inline double stats_get(const struct stats_line *s, const char *key)
{
	for (int i = 0; i < s->keys; i++)
		if (!strcmp(s->key[i], key))
			return s->value[i];
	fprintf(stderr, "stats: no %s\n", key);
	return -1;
}

/* Every acquisition lands in exactly one of these; the ones after the
 * first two appear only where the line has them. */
static inline double stats_acquisitions(const struct stats_line *s)
{
	double n = stats_get(s, "acquisitions_fast") + stats_get(s, "acquisitions_slow");
	const char *optional[] = { "acquisitions_spun", "acquisitions_timed", "acquisitions_word",
				   "queue_fallbacks" };
	for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
		for (int k = 0; k < s->keys; k++)
			if (!strcmp(s->key[k], optional[i]))
				n += s->value[k];
	return n;
}

#endif
