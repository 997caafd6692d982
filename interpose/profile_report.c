/* interpose/profile_report.c — the report of the contention profile.
 *
 * Picks the PROFILE_TOP mutexes with the most contended acquisitions since
 * the previous report (ties: the longest total wait), names each one's
 * call site with dladdr, and writes a table, or one JSON object on one
 * line, to the report's file or stderr.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "profile.h"
#include "profile_table.h"
#include "report.h"
#include "report_sink.h"

struct row {
	uintptr_t mutex, call_site;
	uint64_t acquisitions, contended, local, remote, transfers_local, transfers_remote;
	uint64_t wait_total_ns, wait_max_ns;
};

struct site {
	const char *function; /* NULL when the object exports no name for it */
	uintptr_t function_offset;
	const char *object;   /* NULL when no object maps the address */
	uintptr_t object_offset;
};

/* Text that grows in a fixed buffer and is cut short, never overrun. */
struct text {
	char buf[16384];
	size_t len;
};

static struct text out; /* one report at a time: the report guard */

/* Each record's counts at the previous report, subtracted from the next
 * (under the report guard); touched only for claimed records. */
struct counts {
	uint64_t acquisitions, contended, local, remote, transfers_local, transfers_remote;
	uint64_t wait_total_ns;
};
static struct counts previous[PROFILE_RECORDS];
static uint64_t previous_untracked;

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	size_t room = sizeof t->buf - t->len;
	int n = vsnprintf(t->buf + t->len, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n < room ? (size_t)n : room - 1;
}

static void put_json_string(struct text *t, const char *s)
{
	put(t, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			put(t, "\\%c", c);
		else if (c < 0x20)
			put(t, "\\u%04x", c);
		else
			put(t, "%c", c);
	}
	put(t, "\"");
}

static void flush(struct text *t)
{
	report_sink_write(t->buf, t->len);
	t->len = 0;
}

static bool ranks_before(const struct row *a, const struct row *b)
{
	if (a->contended != b->contended)
		return a->contended > b->contended;
	return a->wait_total_ns > b->wait_total_ns;
}

/* now - *before, and *before = now (counts only grow; the clamp is insurance). */
static uint64_t since(uint64_t now, uint64_t *before)
{
	uint64_t d = now >= *before ? now - *before : 0;
	*before = now;
	return d;
}

/* Record r's counts since the previous report; its maximum wait is taken
 * (swapped to 0), so it too is since the previous report. */
static struct row read_record(struct profile_record *r, struct counts *before)
{
	struct row row = {
		.mutex = atomic_load_explicit(&r->mutex, memory_order_relaxed),
		.call_site = atomic_load_explicit(&r->call_site, memory_order_relaxed),
	};
	if (row.mutex == 0)
		return row;
	row.acquisitions = since(atomic_load_explicit(&r->acquisitions, memory_order_relaxed),
				 &before->acquisitions);
	row.contended = since(atomic_load_explicit(&r->contended, memory_order_relaxed),
			      &before->contended);
	row.local = since(atomic_load_explicit(&r->handoffs_local, memory_order_relaxed),
			  &before->local);
	row.remote = since(atomic_load_explicit(&r->handoffs_remote, memory_order_relaxed),
			   &before->remote);
	row.transfers_local = since(atomic_load_explicit(&r->transfers_local, memory_order_relaxed),
				    &before->transfers_local);
	row.transfers_remote = since(atomic_load_explicit(&r->transfers_remote,
							  memory_order_relaxed),
				     &before->transfers_remote);
	row.wait_total_ns = since(atomic_load_explicit(&r->wait_total_ns, memory_order_relaxed),
				  &before->wait_total_ns);
	row.wait_max_ns = atomic_exchange_explicit(&r->wait_max_ns, 0, memory_order_relaxed);
	return row;
}

void profile_forget_previous(void)
{
	memset(previous, 0, sizeof previous);
	previous_untracked = 0;
}

/* The top rows, best first; returns how many, and every contended mutex in *seen. */
static unsigned pick_top(struct row top[PROFILE_TOP], unsigned *seen)
{
	unsigned n = 0;
	*seen = 0;
	for (unsigned i = 0; i < PROFILE_RECORDS; i++) {
		struct row r = read_record(&profile_table[i], &previous[i]);
		if (r.mutex == 0 || r.contended == 0)
			continue;
		++*seen;
		if (n == PROFILE_TOP && !ranks_before(&r, &top[n - 1]))
			continue;
		unsigned at = n < PROFILE_TOP ? n++ : n - 1;
		while (at > 0 && ranks_before(&r, &top[at - 1])) {
			top[at] = top[at - 1];
			at--;
		}
		top[at] = r;
	}
	return n;
}

static struct site symbolize(uintptr_t return_address)
{
	struct site s = { 0 };
	Dl_info info;
	/* Look up the call instruction, one byte back, not what follows it. */
	if (!return_address || !dladdr((void *)(return_address - 1), &info))
		return s;
	s.object = info.dli_fname && *info.dli_fname ? info.dli_fname : NULL;
	s.object_offset = return_address - (uintptr_t)info.dli_fbase;
	if (info.dli_sname && info.dli_saddr) {
		s.function = info.dli_sname;
		s.function_offset = return_address - (uintptr_t)info.dli_saddr;
	}
	return s;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static double per_us(uint64_t ns, uint64_t count)
{
	return count ? (double)ns / 1000.0 / (double)count : 0.0;
}

static void put_site_text(struct text *t, uintptr_t call_site)
{
	struct site s = symbolize(call_site);
	if (s.function)
		put(t, "%s+0x%lx (%s)", s.function, (unsigned long)s.function_offset,
		    s.object ? base_name(s.object) : "?");
	else if (s.object)
		put(t, "%s+0x%lx", base_name(s.object), (unsigned long)s.object_offset);
	else if (call_site)
		put(t, "0x%lx", (unsigned long)call_site);
	else
		put(t, "?");
}

static void report_table(const struct report_stamp *stamp, const struct row *top, unsigned n,
			 unsigned seen, uint64_t untracked)
{
	put(&out, "cnamutex: profile pid=%ld time=%.3f interval_s=%.3f final=%d\n",
	    (long)stamp->pid, stamp->time_s, stamp->interval_s, (int)stamp->final);
	if (seen == 0)
		put(&out, "cnamutex: profile: no contended mutexes\n");
	else
		put(&out, "cnamutex: profile: %u contended mutex%s; top %u by contended"
			  " acquisitions (acquisitions counted from each mutex's first"
			  " contention)\n",
		    seen, seen == 1 ? "" : "es", n);
	if (untracked)
		put(&out, "cnamutex: profile: %llu contended acquisitions not tracked (table full)\n",
		    (unsigned long long)untracked);
	if (n)
		put(&out, "cnamutex: %4s %-18s %10s %10s %6s %10s %10s %8s %8s %9s %9s  %s\n",
		    "rank", "mutex", "acquired", "contended", "share", "xfer_local", "xfer_remote",
		    "local", "remote", "mean_us", "max_us", "call site");
	flush(&out);
	for (unsigned i = 0; i < n; i++) {
		const struct row *r = &top[i];
		double share = r->acquisitions
				       ? 100.0 * (double)r->contended / (double)r->acquisitions
				       : 0.0;
		char address[24];
		snprintf(address, sizeof address, "%p", (void *)r->mutex);
		put(&out, "cnamutex: %4u %-18s %10llu %10llu %5.1f%% %10llu %10llu %8llu %8llu"
			  " %9.1f %9.1f  ",
		    i + 1, address, (unsigned long long)r->acquisitions,
		    (unsigned long long)r->contended, share,
		    (unsigned long long)r->transfers_local, (unsigned long long)r->transfers_remote,
		    (unsigned long long)r->local,
		    (unsigned long long)r->remote, per_us(r->wait_total_ns, r->contended),
		    per_us(r->wait_max_ns, 1));
		put_site_text(&out, r->call_site);
		put(&out, "\n");
		flush(&out);
	}
}

static void report_json(const struct report_stamp *stamp, const struct row *top, unsigned n,
			unsigned seen, uint64_t untracked)
{
	put(&out, "{\"cnamutex_profile\":{\"pid\":%ld,\"time\":%.3f,\"interval_s\":%.3f,"
		  "\"final\":%s,\"contended_mutexes\":%u,\"untracked_acquisitions\":%llu,"
		  "\"top\":[",
	    (long)stamp->pid, stamp->time_s, stamp->interval_s, stamp->final ? "true" : "false",
	    seen, (unsigned long long)untracked);
	for (unsigned i = 0; i < n; i++) {
		const struct row *r = &top[i];
		struct site s = symbolize(r->call_site);
		put(&out, "%s{\"rank\":%u,\"mutex\":\"%p\",\"acquisitions\":%llu,\"contended\":%llu,"
			  "\"contended_share\":%.4f,\"transfers_local\":%llu,\"transfers_remote\":%llu,"
			  "\"handoffs_local\":%llu,\"handoffs_remote\":%llu,"
			  "\"wait_mean_us\":%.1f,\"wait_max_us\":%.1f,\"call_site\":{\"address\":\"%p\","
			  "\"function\":",
		    i ? "," : "", i + 1, (void *)r->mutex, (unsigned long long)r->acquisitions,
		    (unsigned long long)r->contended,
		    r->acquisitions ? (double)r->contended / (double)r->acquisitions : 0.0,
		    (unsigned long long)r->transfers_local, (unsigned long long)r->transfers_remote,
		    (unsigned long long)r->local, (unsigned long long)r->remote,
		    per_us(r->wait_total_ns, r->contended), per_us(r->wait_max_ns, 1),
		    (void *)r->call_site);
		if (s.function)
			put_json_string(&out, s.function);
		else
			put(&out, "null");
		/* offset: from the function when named, else from the object. */
		put(&out, ",\"offset\":%lu,\"object\":",
		    (unsigned long)(s.function ? s.function_offset : s.object_offset));
		if (s.object)
			put_json_string(&out, s.object);
		else
			put(&out, "null");
		put(&out, "}}");
	}
	put(&out, "]}}\n");
	flush(&out);
}

void profile_report(const struct report_stamp *stamp)
{
	if (!profile_enabled)
		return;
	struct row top[PROFILE_TOP];
	unsigned seen;
	unsigned n = pick_top(top, &seen);
	uint64_t untracked = since(atomic_load_explicit(&profile_untracked, memory_order_relaxed),
				   &previous_untracked);
	if (profile_output == PROFILE_JSON)
		report_json(stamp, top, n, seen, untracked);
	else
		report_table(stamp, top, n, seen, untracked);
}
