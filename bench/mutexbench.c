// mutexbench: a lock-throughput microbenchmark in the manner of locktorture
// and will-it-scale.  N threads loop: take one of M locks, write the cache
// lines that lock protects, spin a little inside, release, spin a little
// outside.  Throughput is counted between two snapshots after a warm-up, so
// thread start and stop are not measured.  The protected counters are plain
// (non-atomic) memory: if the lock ever lets two threads in, updates are lost
// and the run exits with status 1 instead of printing a figure.
//
// Locks: pthread (the program's pthread_mutex_*, i.e. glibc's or whatever is
// preloaded), or Concurrency Kit's MCS and ticket spinlocks used directly, to
// compare waiting disciplines.
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_CK
#include <ck_spinlock.h>
#endif

#include "cpu_time.h"
#include "monotonic.h"

#define CACHE_LINE 64
#define MAX_THREADS 1024
#define MAX_SHARED_LINES 64

enum lock_type { LOCK_PTHREAD, LOCK_CK_MCS, LOCK_CK_TICKET };
enum output_format { OUTPUT_KV, OUTPUT_CSV, OUTPUT_HUMAN };

struct config {
	unsigned threads;
	unsigned mutexes;
	unsigned shared_lines;
	unsigned long cs_work;
	unsigned long noncs_work;
	bool noncs_random;            // non-critical work uniform in 0..noncs_work
	double duration_s;
	double warmup_s;
	bool adaptive;
	enum lock_type lock;
	bool measure_wait;
	enum output_format format;
};

// One cache line of data a lock protects; every acquisition adds one to each.
struct shared_line {
	_Alignas(CACHE_LINE) uint64_t value;
};

// A lock and the lines it protects.  Two lines of padding on each side keep
// the adjacent-line prefetcher from pairing neighbouring locks.
struct guarded {
	_Alignas(2 * CACHE_LINE) union {
		pthread_mutex_t mutex;
#ifdef HAVE_CK
		ck_spinlock_mcs_t mcs;
		ck_spinlock_ticket_t ticket;
#endif
	} lock;
	struct shared_line lines[MAX_SHARED_LINES];
};

struct worker {
	_Alignas(2 * CACHE_LINE) pthread_t thread;
	unsigned index;
	uint64_t rng;
	// Written by the worker only; read by the main thread for snapshots.
	_Atomic uint64_t ops;
	uint64_t acquisitions;        // every acquisition, warm-up and tail included
	uint64_t exclusion_errors;    // lines found unequal inside a critical section
	uint64_t wait_max_ns;
	uint64_t wait_sum_ns;
	uint64_t wait_samples;
#ifdef HAVE_CK
	ck_spinlock_mcs_context_t mcs_node;
#endif
};

enum phase { PHASE_WARMUP, PHASE_MEASURE, PHASE_STOP };

static struct config cfg = {
	.threads = 2, .mutexes = 1, .shared_lines = 1, .cs_work = 100, .noncs_work = 100,
	.duration_s = 2.0, .warmup_s = 0.5, .lock = LOCK_PTHREAD, .format = OUTPUT_KV,
};
static struct guarded *guarded;
static struct worker *workers;
static _Atomic int phase = PHASE_WARMUP;
static pthread_barrier_t start_barrier;

// Busy work the compiler cannot drop: the asm makes the value opaque.
static void spin_work(unsigned long iterations)
{
	unsigned long sink = 0;
	for (unsigned long i = 0; i < iterations; i++) {
		sink = sink * 31 + i;
		__asm__ volatile("" : "+r"(sink));
	}
}

static uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static void lock_acquire(struct guarded *g, struct worker *w)
{
	switch (cfg.lock) {
	case LOCK_PTHREAD:
		pthread_mutex_lock(&g->lock.mutex);
		break;
#ifdef HAVE_CK
	case LOCK_CK_MCS:
		ck_spinlock_mcs_lock(&g->lock.mcs, &w->mcs_node);
		break;
	case LOCK_CK_TICKET:
		ck_spinlock_ticket_lock(&g->lock.ticket);
		break;
#endif
	default:
		(void)w;
		abort();
	}
}

static void lock_release(struct guarded *g, struct worker *w)
{
	switch (cfg.lock) {
	case LOCK_PTHREAD:
		pthread_mutex_unlock(&g->lock.mutex);
		break;
#ifdef HAVE_CK
	case LOCK_CK_MCS:
		ck_spinlock_mcs_unlock(&g->lock.mcs, &w->mcs_node);
		break;
	case LOCK_CK_TICKET:
		ck_spinlock_ticket_unlock(&g->lock.ticket);
		break;
#endif
	default:
		(void)w;
		abort();
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t ops = 0;
	pthread_barrier_wait(&start_barrier);
	for (;;) {
		// Relaxed: the phase only steers when to stop and whether to time
		// waits; the counters are published by pthread_join.
		int now_phase = atomic_load_explicit(&phase, memory_order_relaxed);
		if (now_phase == PHASE_STOP)
			break;
		struct guarded *g = &guarded[cfg.mutexes == 1 ? 0 : xorshift64(&w->rng) % cfg.mutexes];
		bool timed = cfg.measure_wait && now_phase == PHASE_MEASURE;
		uint64_t wait_start = timed ? now_ns() : 0;
		lock_acquire(g, w);
		if (timed) {
			uint64_t waited = now_ns() - wait_start;
			if (waited > w->wait_max_ns)
				w->wait_max_ns = waited;
			w->wait_sum_ns += waited;
			w->wait_samples++;
		}
		uint64_t first = g->lines[0].value;
		for (unsigned i = 0; i < cfg.shared_lines; i++) {
			if (g->lines[i].value != first)
				w->exclusion_errors++;
			g->lines[i].value = first + 1;
		}
		spin_work(cfg.cs_work);
		lock_release(g, w);
		w->acquisitions++;
		ops++;
		// Relaxed: a statistics snapshot; this thread is the only writer.
		atomic_store_explicit(&w->ops, ops, memory_order_relaxed);
		spin_work(cfg.noncs_random ? xorshift64(&w->rng) % (cfg.noncs_work + 1)
					   : cfg.noncs_work);
	}
	return NULL;
}

static void sleep_seconds(double seconds)
{
	struct timespec ts = { .tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mutexbench [options]\n"
		"  --threads N        worker threads (default 2)\n"
		"  --mutexes M        locks; each operation picks one at random (default 1)\n"
		"  --shared-lines L   cache lines written inside the critical section (default 1, max %d)\n"
		"  --cs-work W        busy-loop iterations inside the critical section (default 100)\n"
		"  --noncs-work W     busy-loop iterations between critical sections (default 100)\n"
		"  --noncs-random     ... drawn uniformly from 0..W for each operation\n"
		"  --duration S       measured seconds (default 2)\n"
		"  --warmup S         unmeasured seconds before (default 0.5)\n"
		"  --kind K           pthread mutex kind: normal or adaptive (default normal)\n"
		"  --lock L           pthread, ck-mcs or ck-ticket (default pthread)\n"
		"  --measure-wait     time every acquisition (adds two clock reads per operation)\n"
		"  --csv              print a CSV header and row instead of a key=value line\n"
		"  --human            print a readable summary\n"
		"Exit status: 0 ok, 1 the locks lost updates, 2 bad usage or setup failure.\n",
		MAX_SHARED_LINES);
}

static bool parse_unsigned(const char *text, unsigned long min, unsigned long max,
			   unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max || text[0] == '-')
		return false;
	*out = v;
	return true;
}

static bool parse_seconds(const char *text, double *out)
{
	char *end;
	double v = strtod(text, &end);
	if (end == text || *end || !(v >= 0) || v > 86400)
		return false;
	*out = v;
	return true;
}

static void parse_args(int argc, char **argv)
{
	enum { O_THREADS = 1, O_MUTEXES, O_LINES, O_CS, O_NONCS, O_NONCS_RANDOM, O_DURATION, O_WARMUP,
	       O_KIND, O_LOCK, O_WAIT, O_CSV, O_HUMAN, O_HELP };
	static const struct option options[] = {
		{ "threads", required_argument, 0, O_THREADS },
		{ "mutexes", required_argument, 0, O_MUTEXES },
		{ "shared-lines", required_argument, 0, O_LINES },
		{ "cs-work", required_argument, 0, O_CS },
		{ "noncs-work", required_argument, 0, O_NONCS },
		{ "noncs-random", no_argument, 0, O_NONCS_RANDOM },
		{ "duration", required_argument, 0, O_DURATION },
		{ "warmup", required_argument, 0, O_WARMUP },
		{ "kind", required_argument, 0, O_KIND },
		{ "lock", required_argument, 0, O_LOCK },
		{ "measure-wait", no_argument, 0, O_WAIT },
		{ "csv", no_argument, 0, O_CSV },
		{ "human", no_argument, 0, O_HUMAN },
		{ "help", no_argument, 0, O_HELP },
		{ 0, 0, 0, 0 },
	};
	int opt;
	unsigned long v;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		bool ok = true;
		switch (opt) {
		case O_THREADS:
			ok = parse_unsigned(optarg, 1, MAX_THREADS, &v);
			cfg.threads = (unsigned)v;
			break;
		case O_MUTEXES:
			ok = parse_unsigned(optarg, 1, 1u << 20, &v);
			cfg.mutexes = (unsigned)v;
			break;
		case O_LINES:
			ok = parse_unsigned(optarg, 1, MAX_SHARED_LINES, &v);
			cfg.shared_lines = (unsigned)v;
			break;
		case O_CS:
			ok = parse_unsigned(optarg, 0, 1ul << 40, &cfg.cs_work);
			break;
		case O_NONCS:
			ok = parse_unsigned(optarg, 0, 1ul << 40, &cfg.noncs_work);
			break;
		case O_NONCS_RANDOM:
			cfg.noncs_random = true;
			break;
		case O_DURATION:
			ok = parse_seconds(optarg, &cfg.duration_s) && cfg.duration_s > 0;
			break;
		case O_WARMUP:
			ok = parse_seconds(optarg, &cfg.warmup_s);
			break;
		case O_KIND:
			if (strcmp(optarg, "normal") == 0)
				cfg.adaptive = false;
			else if (strcmp(optarg, "adaptive") == 0)
				cfg.adaptive = true;
			else
				ok = false;
			break;
		case O_LOCK:
			if (strcmp(optarg, "pthread") == 0)
				cfg.lock = LOCK_PTHREAD;
			else if (strcmp(optarg, "ck-mcs") == 0)
				cfg.lock = LOCK_CK_MCS;
			else if (strcmp(optarg, "ck-ticket") == 0)
				cfg.lock = LOCK_CK_TICKET;
			else
				ok = false;
#ifndef HAVE_CK
			if (ok && cfg.lock != LOCK_PTHREAD) {
				fprintf(stderr, "mutexbench: built without Concurrency Kit (libck-dev)\n");
				exit(2);
			}
#endif
			break;
		case O_WAIT:
			cfg.measure_wait = true;
			break;
		case O_CSV:
			cfg.format = OUTPUT_CSV;
			break;
		case O_HUMAN:
			cfg.format = OUTPUT_HUMAN;
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			ok = false;
		}
		if (!ok) {
			if (opt > 0 && opt < O_HELP)
				fprintf(stderr, "mutexbench: bad value '%s' for --%s\n", optarg,
					options[opt - 1].name);
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "mutexbench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
	if (cfg.adaptive && cfg.lock != LOCK_PTHREAD) {
		fprintf(stderr, "mutexbench: --kind applies to --lock pthread only\n");
		exit(2);
	}
}

static void init_locks(void)
{
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	if (cfg.adaptive)
		pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	for (unsigned m = 0; m < cfg.mutexes; m++) {
		switch (cfg.lock) {
		case LOCK_PTHREAD:
			pthread_mutex_init(&guarded[m].lock.mutex, &attr);
			break;
#ifdef HAVE_CK
		case LOCK_CK_MCS:
			ck_spinlock_mcs_init(&guarded[m].lock.mcs);
			break;
		case LOCK_CK_TICKET:
			ck_spinlock_ticket_init(&guarded[m].lock.ticket);
			break;
#endif
		default:
			abort();
		}
	}
	pthread_mutexattr_destroy(&attr);
}

static const char *lock_name(void)
{
	switch (cfg.lock) {
	case LOCK_CK_MCS: return "ck-mcs";
	case LOCK_CK_TICKET: return "ck-ticket";
	default: return "pthread";
	}
}

struct result {
	double seconds;
	uint64_t total_ops;
	double ops_per_sec;
	uint64_t min_ops, max_ops;
	double min_max_ratio;
	double jain;
	double wait_max_us;
	double wait_mean_us;
	double cpu_use;               // CPU seconds of the process per measured second
	uint64_t acquisitions;
	uint64_t exclusion_errors;
	uint64_t lost_updates;
	bool verified;
};

static void print_result(const struct result *r)
{
	const char *kind = cfg.adaptive ? "adaptive" : "normal";
	const char *preload = getenv("LD_PRELOAD");
	bool preloaded = preload && *preload;
	char wait_max[32] = "", wait_mean[32] = "";
	if (cfg.measure_wait) {
		snprintf(wait_max, sizeof wait_max, "%.1f", r->wait_max_us);
		snprintf(wait_mean, sizeof wait_mean, "%.2f", r->wait_mean_us);
	}
	switch (cfg.format) {
	case OUTPUT_CSV:
		printf("lock,kind,preloaded,threads,mutexes,shared_lines,cs_work,noncs_work,seconds,"
		       "ops,ops_per_sec,min_ops,max_ops,min_max_ratio,jain,wait_max_us,wait_mean_us,verified,"
		       "cpu_use\n");
		printf("%s,%s,%d,%u,%u,%u,%lu,%lu,%.3f,%" PRIu64 ",%.0f,%" PRIu64 ",%" PRIu64
		       ",%.4f,%.4f,%s,%s,%d,%.2f\n",
		       lock_name(), kind, preloaded, cfg.threads, cfg.mutexes, cfg.shared_lines,
		       cfg.cs_work, cfg.noncs_work, r->seconds, r->total_ops, r->ops_per_sec,
		       r->min_ops, r->max_ops, r->min_max_ratio, r->jain, wait_max, wait_mean,
		       r->verified, r->cpu_use);
		break;
	case OUTPUT_HUMAN:
		printf("mutexbench: %s (%s)%s, %u threads, %u mutexes, %u shared lines, cs %lu, non-cs %lu\n",
		       lock_name(), kind, preloaded ? " preloaded" : "", cfg.threads, cfg.mutexes,
		       cfg.shared_lines, cfg.cs_work, cfg.noncs_work);
		printf("  %.0f ops/s over %.2f s (%" PRIu64 " ops)\n", r->ops_per_sec, r->seconds,
		       r->total_ops);
		printf("  per thread: min %" PRIu64 ", max %" PRIu64 ", min/max %.3f, Jain %.4f\n",
		       r->min_ops, r->max_ops, r->min_max_ratio, r->jain);
		printf("  CPU use: %.2f of %ld CPUs\n", r->cpu_use, sysconf(_SC_NPROCESSORS_ONLN));
		if (cfg.measure_wait)
			printf("  lock wait: max %s us, mean %s us\n", wait_max, wait_mean);
		printf("  counters: %" PRIu64 " acquisitions, %s\n", r->acquisitions,
		       r->verified ? "verified" : "LOST UPDATES");
		break;
	default:
		printf("mutexbench lock=%s kind=%s preloaded=%d threads=%u mutexes=%u shared_lines=%u"
		       " cs_work=%lu noncs_work=%lu seconds=%.3f ops=%" PRIu64 " ops_per_sec=%.0f"
		       " min_ops=%" PRIu64 " max_ops=%" PRIu64 " min_max_ratio=%.4f jain=%.4f",
		       lock_name(), kind, preloaded, cfg.threads, cfg.mutexes, cfg.shared_lines,
		       cfg.cs_work, cfg.noncs_work, r->seconds, r->total_ops, r->ops_per_sec,
		       r->min_ops, r->max_ops, r->min_max_ratio, r->jain);
		if (cfg.measure_wait)
			printf(" wait_max_us=%s wait_mean_us=%s", wait_max, wait_mean);
		printf(" cpu_use=%.2f verified=%d\n", r->cpu_use, r->verified);
	}
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);

	guarded = aligned_alloc(2 * CACHE_LINE, sizeof *guarded * cfg.mutexes);
	workers = aligned_alloc(2 * CACHE_LINE, sizeof *workers * cfg.threads);
	uint64_t *start_ops = calloc(cfg.threads, sizeof *start_ops);
	if (!guarded || !workers || !start_ops) {
		fprintf(stderr, "mutexbench: out of memory\n");
		return 2;
	}
	memset(guarded, 0, sizeof *guarded * cfg.mutexes);
	memset(workers, 0, sizeof *workers * cfg.threads);
	init_locks();
	pthread_barrier_init(&start_barrier, NULL, cfg.threads + 1);

	for (unsigned t = 0; t < cfg.threads; t++) {
		workers[t].index = t;
		workers[t].rng = 0x9e3779b97f4a7c15ull * (t + 1);
		int err = pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
		if (err) {
			fprintf(stderr, "mutexbench: pthread_create: %s\n", strerror(err));
			return 2;
		}
	}
	pthread_barrier_wait(&start_barrier);
	sleep_seconds(cfg.warmup_s);

	// Relaxed: the snapshot below is approximate by nature (each counter
	// is read at a slightly different instant), as in will-it-scale.
	atomic_store_explicit(&phase, PHASE_MEASURE, memory_order_relaxed);
	uint64_t t0 = now_ns();
	double cpu0 = process_cpu_seconds();
	for (unsigned t = 0; t < cfg.threads; t++)
		start_ops[t] = atomic_load_explicit(&workers[t].ops, memory_order_relaxed);
	sleep_seconds(cfg.duration_s);
	struct result r = { 0 };
	r.min_ops = UINT64_MAX;
	double sum = 0, sum_sq = 0;
	for (unsigned t = 0; t < cfg.threads; t++) {
		uint64_t ops = atomic_load_explicit(&workers[t].ops, memory_order_relaxed) - start_ops[t];
		r.total_ops += ops;
		if (ops < r.min_ops)
			r.min_ops = ops;
		if (ops > r.max_ops)
			r.max_ops = ops;
		sum += (double)ops;
		sum_sq += (double)ops * (double)ops;
	}
	r.seconds = (double)(now_ns() - t0) / 1e9;
	r.cpu_use = (process_cpu_seconds() - cpu0) / r.seconds;
	atomic_store_explicit(&phase, PHASE_STOP, memory_order_relaxed);

	uint64_t wait_sum = 0, wait_samples = 0, wait_max = 0;
	for (unsigned t = 0; t < cfg.threads; t++) {
		pthread_join(workers[t].thread, NULL);
		r.acquisitions += workers[t].acquisitions;
		r.exclusion_errors += workers[t].exclusion_errors;
		wait_sum += workers[t].wait_sum_ns;
		wait_samples += workers[t].wait_samples;
		if (workers[t].wait_max_ns > wait_max)
			wait_max = workers[t].wait_max_ns;
	}

	// Every acquisition added one to every protected line: the sums must
	// equal the acquisition count exactly.
	for (unsigned i = 0; i < cfg.shared_lines; i++) {
		uint64_t line_sum = 0;
		for (unsigned m = 0; m < cfg.mutexes; m++)
			line_sum += guarded[m].lines[i].value;
		if (line_sum != r.acquisitions)
			r.lost_updates += r.acquisitions > line_sum ? r.acquisitions - line_sum
								    : line_sum - r.acquisitions;
	}
	r.verified = r.lost_updates == 0 && r.exclusion_errors == 0;
	r.ops_per_sec = (double)r.total_ops / r.seconds;
	r.min_max_ratio = r.max_ops ? (double)r.min_ops / (double)r.max_ops : 0;
	r.jain = sum_sq > 0 ? sum * sum / ((double)cfg.threads * sum_sq) : 0;
	r.wait_max_us = (double)wait_max / 1e3;
	r.wait_mean_us = wait_samples ? (double)wait_sum / (double)wait_samples / 1e3 : 0;

	if (!r.verified) {
		fprintf(stderr,
			"mutexbench: FAILED: %" PRIu64 " acquisitions, protected counters off by %" PRIu64
			", %" PRIu64 " critical sections saw torn lines\n",
			r.acquisitions, r.lost_updates, r.exclusion_errors);
		return 1;
	}
	print_result(&r);
	for (unsigned m = 0; m < cfg.mutexes && cfg.lock == LOCK_PTHREAD; m++)
		pthread_mutex_destroy(&guarded[m].lock.mutex);
	pthread_barrier_destroy(&start_barrier);
	free(start_ops);
	free(workers);
	free(guarded);
	return 0;
}
