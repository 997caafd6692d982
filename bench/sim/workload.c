/* bench/sim/workload.c — the three profiles, the threads' loop, the checks. */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "glibc_mutex.h"
#include "profile.h"
#include "queue_table.h"
#include "stats.h"
#include "thread.h"

unsigned sim_futex_sleepers(void);
void sim_futex_reset(void);

/*
 * tiny: one mutex, one shared line, next to no work in or out (mutexbench
 * --cs-work 0 --noncs-work 0): the lock's own cost is all there is.
 * mutexbench: its defaults, one mutex, one line, 100 rounds of its
 * dependent multiply-add inside and outside.  Both calibrated on this
 * machine: one thread of each does 66 and 6.8 Mops/s here (15 and 146 ns
 * an operation), and the 2c model 62.5 and 7.0 with these figures (the two
 * locked RMWs and the hits are the rest of tiny's 15 ns).
 * leveldb: readrandom's Get() as the cover letter's profile shows it: the
 * DB mutex taken twice (reference the memtable and version, then drop
 * them; a few lines each) around two lookups in the 16-shard LRU caches
 * (table cache, block cache), each a short hold of one shard's mutex, with
 * ~1.3 us of search work in between.
 */
const struct sim_profile sim_profiles[3] = {
	{ .name = "tiny", .mutexes = 1, .steps = 1,
	  .step = { { 0, 1, 1, 1, 2 } } },
	{ .name = "mutexbench", .mutexes = 1, .steps = 1,
	  .step = { { 0, 1, 65, 1, 65 } } },
	{ .name = "leveldb", .mutexes = 17, .steps = 4,
	  .step = { { 0, 1, 60, 2, 300 }, { 1, 16, 40, 1, 300 },
		    { 1, 16, 40, 1, 300 }, { 0, 1, 40, 2, 400 } } },
};

const struct sim_profile *sim_profile_named(const char *name)
{
	for (unsigned i = 0; i < sizeof sim_profiles / sizeof sim_profiles[0]; i++)
		if (strcmp(sim_profiles[i].name, name) == 0)
			return &sim_profiles[i];
	return NULL;
}

struct shared_lines {
	_Alignas(64) uint64_t line[SIM_MAX_LINES][8];
};

struct mutex_track {
	struct sim_thread *holder;
	int last_owner;
	unsigned last_socket;
};

struct worker {
	uint64_t ops;
	uint64_t wait_start;
	bool waiting;
};

struct run {
	const struct sim_run_config *cfg;
	struct sim sim;
	struct sim_mutex *mutexes;
	struct shared_lines *lines;
	struct sim_mcs_node *mcs;
	struct mutex_track track[SIM_MAX_MUTEXES];
	struct worker *workers;
	uint64_t window_start, end;
	uint64_t transfers, local, max_wait;
	char detail[240];
};

static bool in_window(const struct run *r, uint64_t now)
{
	return r->cfg->ops_per_thread || (now >= r->window_start && now < r->end);
}

static void fail(struct run *r, const char *what)
{
	if (!r->sim.failure)
		r->sim.failure = what;
}

static void acquired(struct run *r, struct sim_thread *t, unsigned mi, uint64_t waited)
{
	struct mutex_track *k = &r->track[mi];
	if (k->holder) {
		snprintf(r->detail, sizeof r->detail,
			 "threads %u and %u both own mutex %u at %llu ns",
			 k->holder->id, t->id, mi, (unsigned long long)t->now);
		fail(r, "two owners");
	}
	k->holder = t;
	unsigned socket = sim_thread_socket(t);
	if (in_window(r, t->now)) {
		if (k->last_owner >= 0 && (unsigned)k->last_owner != t->id) {
			r->transfers++;
			r->local += socket == k->last_socket;
		}
		if (waited > r->max_wait)
			r->max_wait = waited;
	}
	k->last_owner = (int)t->id;
	k->last_socket = socket;
}

/* 0.5x .. 1.5x of ns. */
static uint64_t jitter(struct sim_thread *t, uint64_t ns)
{
	return ns ? ns / 2 + sim_random(&t->rng) % (ns + 1) : 0;
}

static void worker(struct sim_thread *t, void *arg)
{
	struct run *r = arg;
	const struct sim_run_config *cfg = r->cfg;
	struct worker *w = &r->workers[t->id];
	for (unsigned op = 0;; op++) {
		if (cfg->ops_per_thread ? op >= cfg->ops_per_thread : t->now >= r->end)
			break;
		for (unsigned i = 0; i < cfg->profile->steps; i++) {
			const struct sim_step *st = &cfg->profile->step[i];
			unsigned mi = st->first_mutex +
				(st->mutex_choices > 1 ? sim_random(&t->rng) % st->mutex_choices : 0);
			struct sim_mutex *m = &r->mutexes[mi];
			w->wait_start = t->now;
			w->waiting = true;
			sim_lock(cfg->lock, m, &r->mcs[t->id]);
			w->waiting = false;
			acquired(r, t, mi, t->now - w->wait_start);
			for (unsigned l = 0; l < st->cs_lines; l++) {
				t->now += sim_line_access(t, r->lines[mi].line[l], true);
				r->lines[mi].line[l][0]++;
			}
			sim_work(t, st->cs_ns);
			r->track[mi].holder = NULL;
			sim_unlock(cfg->lock, m, &r->mcs[t->id]);
			sim_work(t, jitter(t, st->after_ns));
		}
		if (in_window(r, t->now))
			w->ops++;
	}
}

/* After every event: no waiter has waited longer than the bound. */
static void check_waits(struct sim *s, void *arg)
{
	struct run *r = arg;
	uint64_t now = s->current->now;
	for (unsigned i = 0; i < s->nthreads; i++) {
		const struct worker *w = &r->workers[i];
		if (w->waiting && now > w->wait_start + r->cfg->wait_bound_ns) {
			const struct sim_thread *t = &s->threads[i];
			static const char *const states[] = { "running", "ready", "blocked", "done" };
			const char *on = !t->futex_word ? "no futex"
				: t->futex_word == &t->lib.node.state ? "its queue node's futex"
								       : "another futex (a mutex word?)";
			snprintf(r->detail, sizeof r->detail,
				 "thread %u has waited %llu us (bound %llu us); it is %s on CPU %u,"
				 " %s, queue node state %u", i,
				 (unsigned long long)((now - w->wait_start) / 1000),
				 (unsigned long long)(r->cfg->wait_bound_ns / 1000),
				 states[t->state], t->cpu, on,
				 (unsigned)__atomic_load_n((const uint32_t *)&t->lib.node.state, __ATOMIC_RELAXED));
			fail(r, "starvation");
			return;
		}
	}
}

/* The end state every lock must leave: nothing held, queued or asleep. */
static void check_quiescent(struct run *r)
{
	if (r->sim.failure)
		return;
	if (sim_futex_sleepers())
		fail(r, "a futex sleeper is left at the end");
	else if (sim_shim_records_in_use())
		fail(r, "a queue record (and its nodes) was not returned");
	for (unsigned i = 0; i < r->cfg->profile->mutexes && !r->sim.failure; i++) {
		if (atomic_load_explicit(mutex_word(&r->mutexes[i].pm), memory_order_relaxed) ||
		    atomic_load_explicit(&r->mutexes[i].mcs_tail, memory_order_relaxed))
			fail(r, "a mutex is still held or queued at the end");
	}
}

/* The library's own counters (interpose/stats_list.h), summed over threads. */
static void report_library_stats(const struct run *r)
{
	fprintf(stderr, "cnasim: %s %s %u threads, shim stats:", r->cfg->machine.name,
		r->cfg->profile->name, r->sim.nthreads);
#define STAT(name, how)                                                        \
	{                                                                      \
		uint64_t v = 0;                                                \
		for (unsigned i = 0; i < r->sim.nthreads; i++) {               \
			uint64_t x = r->sim.threads[i].lib.stats.name;         \
			v = #how[0] == 'M' ? (x > v ? x : v) : v + x;          \
		}                                                              \
		fprintf(stderr, " %s=%llu", #name, (unsigned long long)v);     \
	}
#include "stats_list.h"
#undef STAT
	fprintf(stderr, "\n");
}

/* Every thread's operations in the measured window. */
static uint64_t total_ops(const struct run *r)
{
	uint64_t ops = 0;
	for (unsigned i = 0; i < r->sim.nthreads; i++)
		ops += r->workers[i].ops;
	return ops;
}

/* Futex calls over the whole run (warm-up included), beside the operations
 * and changes of owner of the measured window. */
static void report_futex_calls(const struct run *r)
{
	const struct sim_futex_counts *f = &sim_futex_counts;
	uint64_t ops = total_ops(r);
	fprintf(stderr, "cnasim: %s %s %u threads, %s futex calls: waits=%llu changed=%llu "
		"wakes=%llu woken=%llu requeues=%llu ops_in_window=%llu owner_changes_in_window=%llu\n",
		r->cfg->machine.name,
		r->cfg->profile->name, r->sim.nthreads, sim_lock_names[r->cfg->lock],
		(unsigned long long)f->waits, (unsigned long long)f->waits_changed,
		(unsigned long long)f->wakes, (unsigned long long)f->woken,
		(unsigned long long)f->requeues, (unsigned long long)ops,
		(unsigned long long)r->transfers);
}

static double jain(const struct run *r)
{
	double sum = 0, squares = 0;
	for (unsigned i = 0; i < r->sim.nthreads; i++) {
		double x = (double)r->workers[i].ops;
		sum += x;
		squares += x * x;
	}
	return squares > 0 ? sum * sum / (r->sim.nthreads * squares) : 1.0;
}

bool sim_run_workload(const struct sim_run_config *cfg, struct sim_run_result *out)
{
	struct run *r = calloc(1, sizeof *r);
	if (!r)
		return false;
	r->cfg = cfg;
	unsigned n = cfg->threads, nm = cfg->profile->mutexes;
	/* Everything the modelled code touches at the same address in every
	 * run, and the library's tables as a new process has them (arena.c). */
	sim_arena_reset();
	queue_table_forget_all();
	thread_forget_all();
	cpu_batch_forget_all();
	r->mutexes = sim_arena_alloc(nm * sizeof *r->mutexes, 128);
	r->lines = sim_arena_alloc(nm * sizeof *r->lines, 64);
	r->mcs = sim_arena_alloc(n * sizeof *r->mcs, 64);
	r->workers = calloc(n, sizeof *r->workers);
	bool ok = r->mutexes && r->lines && r->mcs && r->workers &&
		  sim_create(&r->sim, &cfg->machine, n, cfg->seed);
	if (ok) {
		memset(r->lines, 0, nm * sizeof *r->lines);
		memset(r->mcs, 0, n * sizeof *r->mcs);
		for (unsigned i = 0; i < nm; i++) {
			sim_mutex_init(&r->mutexes[i]);
			r->track[i].last_owner = -1;
		}
		sim_futex_reset();
		sim_shim_configure(cfg->machine.sockets, sim_machine_cpus(&cfg->machine),
				   cfg->threshold_ns, cfg->spin_budget, cfg->shuffle_bits);
		stats_enabled = instrument_enabled = cfg->library_stats;
		r->window_start = cfg->warmup_ns;
		r->end = cfg->warmup_ns + cfg->duration_ns;
		r->sim.chaos = cfg->chaos;
		r->sim.lag_ns = cfg->lag_ns;
		if (cfg->wait_bound_ns) {
			r->sim.check = check_waits;
			r->sim.check_arg = r;
		}
		r->sim.time_limit_ns = cfg->ops_per_thread ? 10000000000ull : r->end + 1000000000ull;
		for (unsigned i = 0; i < n; i++)
			sim_spawn(&r->sim, i, i % r->sim.ncpus, worker, r);
		sim_run(&r->sim);
		check_quiescent(r);
		if (cfg->library_stats && cfg->lock == LOCK_SHIM)
			report_library_stats(r);
		if (cfg->library_stats)
			report_futex_calls(r);

		memset(out, 0, sizeof *out);
		out->ops = total_ops(r);
		uint64_t span = cfg->ops_per_thread ? r->sim.threads[0].now : cfg->duration_ns;
		out->ops_per_s = span ? (double)out->ops * 1e9 / (double)span : 0;
		out->transfers = r->transfers;
		out->local_share = r->transfers ? (double)r->local / (double)r->transfers : 1.0;
		out->jain = jain(r);
		out->max_wait_ns = r->max_wait;
		out->events = r->sim.events;
		out->trace_hash = r->sim.trace_hash;
		out->failure = r->sim.failure;
		snprintf(out->failure_detail, sizeof out->failure_detail, "%s", r->detail);
		for (unsigned i = 0; i < n; i++)
			if (r->sim.threads[i].now > out->sim_ns)
				out->sim_ns = r->sim.threads[i].now;
	}
	sim_destroy(&r->sim);
	free(r->workers);
	free(r);
	return ok;
}
