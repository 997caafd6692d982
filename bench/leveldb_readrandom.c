// leveldb_readrandom: db_bench's fillseq + readrandom against the system's
// libleveldb through its C API, so that the same binary can be run with
// glibc's mutexes and with a preloaded pthread_mutex_* (it links no shim).
//
// Keys are db_bench's: the decimal index zero-padded to 16 bytes; values are
// 100 bytes, half of them a repeat of the other half (db_bench's default
// compression ratio of 0.5).  The database is filled once, compacted into
// sorted tables, marked with its parameters, and reused by later runs that
// ask for the same --num.  Every read must find its key with the expected
// value, or the program exits with status 1.  With --measure-latency each
// read is timed and the longest is printed, a bound on any lock wait inside
// it that is measured the same way with glibc's mutexes and with the shim.
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <leveldb/c.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_time.h"
#include "monotonic.h"

#define KEY_SIZE 16
#define KEY_BUFFER 24   // room for any long; --num keeps keys at 16 digits
#define VALUE_SIZE 100
#define META_KEY "!readrandom-meta"
#define FILL_BATCH 1000

struct config {
	long num;
	long reads;          // per thread; -1: --num
	double duration_s;   // > 0: read for this long instead of --reads
	unsigned threads;
	long cache_size;     // bytes; -1: leveldb's default (8 MiB)
	const char *db_path;
	bool fill_only;
	bool fresh;
	bool measure_latency;
};

struct reader {
	pthread_t thread;
	unsigned index;
	uint64_t rng;
	long done;
	long found;
	long bad_values;
	double seconds;
	uint64_t read_max_ns;  // --measure-latency: the longest leveldb_get
};

static struct config cfg = { .num = 100000, .reads = -1, .threads = 1, .cache_size = -1 };
static leveldb_t *db;
static leveldb_readoptions_t *read_options;
static pthread_barrier_t start_barrier;
static _Atomic bool stop_reading;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void format_key(long index, char key[KEY_BUFFER])
{
	snprintf(key, KEY_BUFFER, "%016ld", index);
}

// The value stored under key number index: 50 pseudo-random printable bytes
// then the same 50 again.
static void make_value(long index, char value[VALUE_SIZE])
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)index * 0xbf58476d1ce4e5b9ull;
	for (int i = 0; i < VALUE_SIZE / 2; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		value[i] = (char)(' ' + x % 95);
	}
	memcpy(value + VALUE_SIZE / 2, value, VALUE_SIZE / 2);
}

static void fail(const char *what, char *err)
{
	fprintf(stderr, "leveldb_readrandom: %s: %s\n", what, err ? err : "failed");
	leveldb_free(err);
	exit(2);
}

static void meta_text(char *buf, size_t size)
{
	snprintf(buf, size, "num=%ld key_size=%d value_size=%d", cfg.num, KEY_SIZE, VALUE_SIZE);
}

static bool database_matches(void)
{
	char expected[128], *err = NULL;
	size_t len;
	meta_text(expected, sizeof expected);
	char *got = leveldb_get(db, read_options, META_KEY, strlen(META_KEY), &len, &err);
	if (err)
		fail("reading the marker", err);
	bool same = got && len == strlen(expected) && memcmp(got, expected, len) == 0;
	leveldb_free(got);
	return same;
}

static void fill_sequential(void)
{
	leveldb_writeoptions_t *write_options = leveldb_writeoptions_create();
	leveldb_writebatch_t *batch = leveldb_writebatch_create();
	char key[KEY_BUFFER], value[VALUE_SIZE], *err = NULL;
	double start = now_s();
	for (long i = 0; i < cfg.num; i++) {
		format_key(i, key);
		make_value(i, value);
		leveldb_writebatch_put(batch, key, KEY_SIZE, value, VALUE_SIZE);
		if ((i + 1) % FILL_BATCH == 0 || i + 1 == cfg.num) {
			leveldb_write(db, write_options, batch, &err);
			if (err)
				fail("fillseq", err);
			leveldb_writebatch_clear(batch);
		}
	}
	double seconds = now_s() - start;
	// One compaction so that later runs read the same stable set of tables.
	leveldb_compact_range(db, NULL, 0, NULL, 0);
	char meta[128];
	meta_text(meta, sizeof meta);
	leveldb_writeoptions_set_sync(write_options, 1);
	leveldb_put(db, write_options, META_KEY, strlen(META_KEY), meta, strlen(meta), &err);
	if (err)
		fail("writing the marker", err);
	printf("fillseq      : %11.3f micros/op; %.0f ops/s; (%ld keys into %s)\n",
	       seconds * 1e6 / (double)cfg.num, (double)cfg.num / seconds, cfg.num, cfg.db_path);
	leveldb_writebatch_destroy(batch);
	leveldb_writeoptions_destroy(write_options);
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	char key[KEY_BUFFER], expected[VALUE_SIZE];
	long limit = cfg.duration_s > 0 ? -1 : cfg.reads;
	pthread_barrier_wait(&start_barrier);
	double start = now_s();
	while (limit < 0 ? !atomic_load_explicit(&stop_reading, memory_order_relaxed)
			 : r->done < limit) {
		// Relaxed above: the flag only ends the loop; results travel by join.
		r->rng ^= r->rng << 13;
		r->rng ^= r->rng >> 7;
		r->rng ^= r->rng << 17;
		long index = (long)(r->rng % (uint64_t)cfg.num);
		format_key(index, key);
		size_t len;
		char *err = NULL;
		uint64_t read_start = cfg.measure_latency ? now_ns() : 0;
		char *value = leveldb_get(db, read_options, key, KEY_SIZE, &len, &err);
		if (cfg.measure_latency) {
			uint64_t took = now_ns() - read_start;
			if (took > r->read_max_ns)
				r->read_max_ns = took;
		}
		if (err)
			fail("readrandom", err);
		if (value) {
			r->found++;
			make_value(index, expected);
			if (len != VALUE_SIZE || memcmp(value, expected, VALUE_SIZE) != 0)
				r->bad_values++;
			leveldb_free(value);
		}
		r->done++;
	}
	r->seconds = now_s() - start;
	return NULL;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: leveldb_readrandom [options]\n"
		"  --num N          keys in the database (default 100000)\n"
		"  --threads T      reader threads (default 1)\n"
		"  --reads R        reads per thread (default --num)\n"
		"  --duration S     read for S seconds instead of --reads\n"
		"  --cache-size B   block cache bytes (default: leveldb's 8 MiB)\n"
		"  --db PATH        database directory (default /tmp/leveldb_readrandom-NUM)\n"
		"  --fill-only      create the database if needed, do not read\n"
		"  --fresh          destroy and refill the database first\n"
		"  --measure-latency  time every read (two clock reads per read); print the\n"
		"                   longest as read_max_us=U after the readrandom line\n"
		"Prints db_bench's line: readrandom : X micros/op; Y ops/s; (F of R found)\n"
		"Exit status: 0 every key found with its value, 1 otherwise, 2 bad usage or I/O error.\n");
}

static long parse_long(const char *text, long min, long max, const char *name)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < min || v > max) {
		fprintf(stderr, "leveldb_readrandom: bad value '%s' for --%s\n", text, name);
		usage(stderr);
		exit(2);
	}
	return v;
}

static void parse_args(int argc, char **argv)
{
	enum { O_NUM = 1, O_THREADS, O_READS, O_DURATION, O_CACHE, O_DB, O_FILL, O_FRESH, O_LATENCY, O_HELP };
	static const struct option options[] = {
		{ "num", required_argument, 0, O_NUM },
		{ "threads", required_argument, 0, O_THREADS },
		{ "reads", required_argument, 0, O_READS },
		{ "duration", required_argument, 0, O_DURATION },
		{ "cache-size", required_argument, 0, O_CACHE },
		{ "db", required_argument, 0, O_DB },
		{ "fill-only", no_argument, 0, O_FILL },
		{ "fresh", no_argument, 0, O_FRESH },
		{ "measure-latency", no_argument, 0, O_LATENCY },
		{ "help", no_argument, 0, O_HELP },
		{ 0, 0, 0, 0 },
	};
	int opt;
	char *end;
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case O_NUM: cfg.num = parse_long(optarg, 1, 9999999999999999L, "num"); break;
		case O_THREADS: cfg.threads = (unsigned)parse_long(optarg, 1, 4096, "threads"); break;
		case O_READS: cfg.reads = parse_long(optarg, 0, LONG_MAX, "reads"); break;
		case O_DURATION:
			cfg.duration_s = strtod(optarg, &end);
			if (end == optarg || *end || !(cfg.duration_s > 0)) {
				fprintf(stderr, "leveldb_readrandom: bad value '%s' for --duration\n", optarg);
				exit(2);
			}
			break;
		case O_CACHE: cfg.cache_size = parse_long(optarg, 0, LONG_MAX, "cache-size"); break;
		case O_DB: cfg.db_path = optarg; break;
		case O_FILL: cfg.fill_only = true; break;
		case O_FRESH: cfg.fresh = true; break;
		case O_LATENCY: cfg.measure_latency = true; break;
		case O_HELP: usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind != argc) {
		usage(stderr);
		exit(2);
	}
	if (cfg.reads < 0)
		cfg.reads = cfg.num;
}

int main(int argc, char **argv)
{
	parse_args(argc, argv);
	static char default_path[64];
	if (!cfg.db_path) {
		snprintf(default_path, sizeof default_path, "/tmp/leveldb_readrandom-%ld", cfg.num);
		cfg.db_path = default_path;
	}

	leveldb_options_t *options = leveldb_options_create();
	leveldb_cache_t *cache = NULL;
	if (cfg.cache_size >= 0) {
		cache = leveldb_cache_create_lru((size_t)cfg.cache_size);
		leveldb_options_set_cache(options, cache);
	}
	leveldb_options_set_create_if_missing(options, 1);
	read_options = leveldb_readoptions_create();
	char *err = NULL;
	if (cfg.fresh) {
		leveldb_destroy_db(options, cfg.db_path, &err);
		if (err)
			fail("destroying the old database", err);
	}
	db = leveldb_open(options, cfg.db_path, &err);
	if (err)
		fail("opening the database", err);
	if (!database_matches()) {
		leveldb_close(db);
		leveldb_destroy_db(options, cfg.db_path, &err);
		if (err)
			fail("destroying the old database", err);
		db = leveldb_open(options, cfg.db_path, &err);
		if (err)
			fail("creating the database", err);
		fill_sequential();
	}
	if (cfg.fill_only)
		goto out;

	struct reader *readers = calloc(cfg.threads, sizeof *readers);
	if (!readers) {
		fprintf(stderr, "leveldb_readrandom: out of memory\n");
		return 2;
	}
	pthread_barrier_init(&start_barrier, NULL, cfg.threads + 1);
	for (unsigned t = 0; t < cfg.threads; t++) {
		readers[t].index = t;
		readers[t].rng = 0x2545f4914f6cdd1dull * (1000 + t);
		int e = pthread_create(&readers[t].thread, NULL, reader_main, &readers[t]);
		if (e) {
			fprintf(stderr, "leveldb_readrandom: pthread_create: %s\n", strerror(e));
			return 2;
		}
	}
	pthread_barrier_wait(&start_barrier);
	double start = now_s();
	double cpu_before = process_cpu_seconds();
	if (cfg.duration_s > 0) {
		struct timespec ts = { .tv_sec = (time_t)cfg.duration_s,
			.tv_nsec = (long)((cfg.duration_s - (double)(time_t)cfg.duration_s) * 1e9) };
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		atomic_store_explicit(&stop_reading, true, memory_order_relaxed);
	}
	long done = 0, found = 0, bad = 0;
	double thread_seconds = 0;
	uint64_t read_max_ns = 0;
	for (unsigned t = 0; t < cfg.threads; t++) {
		pthread_join(readers[t].thread, NULL);
		done += readers[t].done;
		found += readers[t].found;
		bad += readers[t].bad_values;
		thread_seconds += readers[t].seconds;
		if (readers[t].read_max_ns > read_max_ns)
			read_max_ns = readers[t].read_max_ns;
	}
	double elapsed = now_s() - start;
	// As db_bench: micros/op is each thread's time per operation, ops/s is
	// all operations over the wall-clock time.
	double cpu = process_cpu_seconds();
	// cpu_use: CPU seconds of the whole run (the open included) per
	// second of reading, so an idle CPU (a convoy) shows.
	printf("readrandom   : %11.3f micros/op; %.0f ops/s; (%ld of %ld found) cpu_use=%.2f\n",
	       done ? thread_seconds * 1e6 / (double)done : 0.0,
	       elapsed > 0 ? (double)done / elapsed : 0.0, found, done,
	       elapsed > 0 ? (cpu - cpu_before) / elapsed : 0.0);
	if (cfg.measure_latency)
		printf("read_max_us=%.1f\n", (double)read_max_ns / 1e3);
	pthread_barrier_destroy(&start_barrier);
	free(readers);
	if (found != done || bad != 0) {
		fprintf(stderr, "leveldb_readrandom: FAILED: %ld of %ld reads missed, %ld wrong values\n",
			done - found, done, bad);
		leveldb_close(db);
		return 1;
	}
out:
	leveldb_close(db);
	leveldb_readoptions_destroy(read_options);
	leveldb_options_destroy(options);
	if (cache)
		leveldb_cache_destroy(cache);
	return 0;
}
