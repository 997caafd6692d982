/* interpose/tunables.c — parse and validate CNAMUTEX_* variables. */
#include "tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool tunable_parse_uint(const char *text, unsigned min, unsigned max,
			unsigned *out, const char **reason)
{
	if (!*text) {
		*reason = "empty value";
		return false;
	}
	unsigned long long value = 0;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9') {
			*reason = "not a decimal number";
			return false;
		}
		value = value * 10 + (unsigned)(*p - '0');
		if (value > max) {
			*reason = "out of range";
			return false;
		}
	}
	if (value < min) {
		*reason = "out of range";
		return false;
	}
	*out = (unsigned)value;
	return true;
}

/* Copy at most 200 bytes of value into out, control bytes escaped, so the
 * complaint stays one line whatever the environment holds. */
static void escape_value(const char *value, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)value;
	     *p && p - (const unsigned char *)value < 200 && n + 5 < size; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '\\';
			out[n++] = 'x';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
}

static int complaint_fd = STDERR_FILENO;

void tunable_complaints_to(int fd)
{
	complaint_fd = fd >= 0 ? fd : STDERR_FILENO;
}

void tunable_complain(const char *name, const char *value, const char *reason,
		      const char *fallback)
{
	char shown[1024], line[1400];
	escape_value(value, shown, sizeof shown);
	int n = snprintf(line, sizeof line, "cnamutex: ignoring %s=%s: %s; using %s\n",
			 name, shown, reason, fallback);
	if (n > 0) {
		size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
		if (line[len - 1] != '\n')
			line[len - 1] = '\n';
		ssize_t ignored = write(complaint_fd, line, len);
		(void)ignored;
	}
}

/* fallback_text: what the complaint says is used instead, NULL for the number. */
static void load_uint(const char *name, unsigned min, unsigned max,
		      unsigned fallback, const char *fallback_text, unsigned *out)
{
	*out = fallback;
	const char *text = getenv(name);
	if (!text)
		return;
	const char *reason;
	unsigned value;
	if (tunable_parse_uint(text, min, max, &value, &reason)) {
		*out = value;
		return;
	}
	char why[96], def[24];
	snprintf(why, sizeof why, "%s (expected %u..%u)", reason, min, max);
	snprintf(def, sizeof def, "%u", fallback);
	tunable_complain(name, text, why, fallback_text ? fallback_text : def);
}

enum { MODE_AUTO, MODE_ON, MODE_OFF };
_Static_assert((int)NUMA_AUTO == MODE_AUTO && (int)NUMA_ON == MODE_ON &&
	       (int)NUMA_OFF == MODE_OFF, "numa_mode in auto, on, off order");
_Static_assert((int)CPU_BATCH_AUTO == MODE_AUTO && (int)CPU_BATCH_ON == MODE_ON &&
	       (int)CPU_BATCH_OFF == MODE_OFF, "cpu_batch_mode in auto, on, off order");

/* A variable of auto, on or off (default auto), as MODE_*. */
static int load_mode(const char *name)
{
	const char *text = getenv(name);
	if (!text || !strcmp(text, "auto"))
		return MODE_AUTO;
	if (!strcmp(text, "on"))
		return MODE_ON;
	if (!strcmp(text, "off"))
		return MODE_OFF;
	tunable_complain(name, text, *text ? "expected auto, on or off" : "empty value", "auto");
	return MODE_AUTO;
}

static void load_flag(const char *name, bool *out)
{
	*out = false;
	const char *text = getenv(name);
	if (!text)
		return;
	if (!strcmp(text, "1"))
		*out = true;
	else if (strcmp(text, "0") != 0)
		tunable_complain(name, text, *text ? "expected 0 or 1" : "empty value", "0");
}

static void load_profile(enum profile_mode *out)
{
	*out = PROFILE_OFF;
	const char *text = getenv("CNAMUTEX_PROFILE");
	if (!text || !strcmp(text, "0"))
		return;
	if (!strcmp(text, "1"))
		*out = PROFILE_TABLE;
	else if (!strcmp(text, "json"))
		*out = PROFILE_JSON;
	else
		tunable_complain("CNAMUTEX_PROFILE", text,
				 *text ? "expected 0, 1 or json" : "empty value", "0");
}

void tunables_load(struct tunables *t)
{
	t->numa = (enum numa_mode)load_mode("CNAMUTEX_NUMA");
	load_uint("CNAMUTEX_THRESHOLD_MS", 1, 100, TUNABLE_THRESHOLD_MS_DEFAULT, NULL,
		  &t->threshold_ms);
	load_uint("CNAMUTEX_SHUFFLE_BITS", 0, 31, TUNABLE_SHUFFLE_BITS_DEFAULT, NULL,
		  &t->shuffle_bits);
	load_uint("CNAMUTEX_SPIN", 0, TUNABLE_SPIN_MAX, TUNABLE_SPIN_DEFAULT, NULL, &t->spin);
	load_uint("CNAMUTEX_CPU_BATCH_US", 0, TUNABLE_CPU_BATCH_US_MAX,
		  TUNABLE_CPU_BATCH_US_DEFAULT, NULL, &t->cpu_batch_us);
	t->cpu_batch = (enum cpu_batch_mode)load_mode("CNAMUTEX_CPU_BATCH");
	load_flag("CNAMUTEX_STATS", &t->stats);
	load_profile(&t->profile);
	load_uint("CNAMUTEX_REPORT_INTERVAL_S", 1, TUNABLE_REPORT_INTERVAL_MAX, 0,
		  "reports only at exit", &t->report_interval_s);
}
