# shellcheck shell=bash
# scripts/bench-common.sh — helpers shared by scripts/bench and
# scripts/sweep-mutexbench (sourced, not run).  Every figure these scripts
# print is a median over interleaved repetitions, and the headline column is
# always a ratio against glibc measured in the same run.

# Packages the benchmarks use (scripts/deps.sh may list them too).
if [ -z "${BENCH_PACKAGES+set}" ]; then
	BENCH_PACKAGES=(libleveldb-dev libck-dev gnuplot-nox)
fi

# bench_build DIR: configure (release, benchmarks on, no test suites) and build.
bench_build() {
	local dir=$1
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dbuildtype=release -Dbench=enabled -Dtests=false \
			>"$dir.setup.log" 2>&1 || { cat "$dir.setup.log"; return 1; }
	fi
	ninja -C "$dir" >"$dir.ninja.log" 2>&1 || { cat "$dir.ninja.log"; return 1; }
}

# run_clean [NAME=VALUE...] -- PROGRAM ARGS...: run with an environment
# holding only PATH, HOME and the given variables, so that neither a stray
# LD_PRELOAD nor the caller's CNAMUTEX_* or GLIBC_TUNABLES leak into a run.
# With BENCH_NICE set (--nice N), the run gets that scheduling niceness, to
# keep other work on a shared machine from dominating the figures.
run_clean() {
	local vars=() nice=()
	while [ "$1" != "--" ]; do vars+=("$1"); shift; done
	shift
	[ -n "${BENCH_NICE:-}" ] && nice=(nice -n "$BENCH_NICE")
	"${nice[@]}" env -i PATH="$PATH" HOME="${HOME:-/root}" "${vars[@]}" "$@"
}

# kv_get KEY < LINE: the value of KEY=VALUE in a space-separated line.
kv_get() {
	tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# median: the median of the numbers on stdin, one per line.
median() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B with three decimals.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f\n", a / b; else print "nan" }'
}

# csv_column FILE FILTER_AWK COLUMN: values of COLUMN (by header name) in the
# rows of a CSV file for which FILTER_AWK (an awk condition over named
# fields f["name"]) holds.
csv_column() {
	awk -F, -v col="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; next }
		{ for (k in idx) f[k] = $idx[k]; if ('"$2"') print $idx[col] }' "$1"
}

# machine_description: one markdown paragraph describing where this ran.
machine_description() {
	local cpu nodes glibc kernel commit
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
	glibc=$(ldd --version 2>/dev/null | head -n 1 | sed 's/.* //')
	kernel=$(uname -r)
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	git diff --quiet HEAD -- cna interpose 2>/dev/null || commit="$commit+local changes"
	local niceness=""
	[ -n "${BENCH_NICE:-}" ] && niceness=" Benchmarks ran at niceness $BENCH_NICE."
	echo "Machine: ${cpu:-unknown CPU}, $(nproc) CPUs, ${nodes:-1} NUMA node(s);" \
		"$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), glibc $glibc, Linux $kernel;" \
		"libcnamutex $commit (release build); $(date -u +%Y-%m-%d).$niceness"
}

# plot_throughput PNG TITLE DATAFILE COLUMN_TITLE...: ops/s against threads
# from a whitespace-separated file "threads series1 series2 ...".
plot_throughput() {
	local png=$1 title=$2 data=$3 logy=$4; shift 4
	command -v gnuplot >/dev/null || { echo "(gnuplot missing: no $png)"; return 0; }
	local plots="" col=2
	for name in "$@"; do
		[ -n "$plots" ] && plots="$plots, "
		plots="$plots'$data' using 1:$col with linespoints lw 2 title '$name'"
		col=$((col + 1))
	done
	gnuplot <<GNUPLOT || echo "(gnuplot failed: no $png)"
set terminal pngcairo size 900,560 noenhanced
set output '$png'
set title '$title'
set xlabel 'threads'
set ylabel 'operations per second (median)'
set logscale x 2
$( [ "$logy" = log ] && echo "set logscale y 10" || echo "set yrange [0:*]" )
set key left bottom
set grid
set format y '%.1s%c'
plot $plots
GNUPLOT
}

# pair_ratios < "A B" lines: "median min max" of B/A over the pairs.
pair_ratios() {
	awk 'NF == 2 && $1 > 0 { print $2 / $1 }' | sort -g |
		awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "nan nan nan"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'
}

# other_runnable: tasks runnable besides this sampler, between runs once the
# benchmark has exited (the load average cannot tell: it still holds the
# benchmark's own threads).  The least of five samples 20 ms apart: work
# that shares the CPUs is runnable in all of them, while the shell that
# just forked this sampler can still be on its way to sleep in the first.
other_runnable() {
	local least=-1 running i
	for i in 1 2 3 4 5; do
		[ "$i" -gt 1 ] && sleep 0.02
		# The builtin read: no fork, so this shell is the one runnable task
		# of ours that the count holds.
		read -r _ _ _ running _ </proc/loadavg
		running=$((${running%%/*} - 1))
		[ "$least" -lt 0 ] || [ "$running" -lt "$least" ] && least=$running
	done
	echo "$least"
}

# load_report LOAD_BEFORE OTHERS: the end of a report's first sentence, and
# a markdown warning when other work shared the CPUs (OTHERS: median of
# other_runnable between runs).  The load average is only reported: a
# benchmark run just before still shows in it.
load_report() {
	echo "load average $1 before the runs, $2 other runnable tasks between runs (median)."
	awk -v a="$1" -v b="$2" -v n="$(nproc)" 'BEGIN {
		if (b >= 1)
			printf "\n**Warning:** other work shared these %d CPUs (load average %s before the runs, %s other runnable tasks between runs); figures are noisy.\n", n, a, b }'
}

# probe_round_trip BUILD: the cache-line round trip between CPUs 0 and 1 in
# ns (bench/pingpong), recorded beside every benchmark pair: on a VM it
# changes with the host's placement of the virtual CPUs, and which lock
# wins changes with it.
probe_round_trip() {
	run_clean -- "$1/bench/pingpong" 2>/dev/null | kv_get round_trip_ns
}

# probe_mode NS: "fast" (the CPUs share a cache, round trip under 250 ns)
# or "slow" (the line crosses something farther, as between sockets).
probe_mode() {
	awk -v ns="$1" 'BEGIN { if (ns == "" || ns == "nan") print "unknown";
		else if (ns < 250) print "fast"; else print "slow" }'
}

# probe_summary RAW_CSV FILTER: "median ns (min-max), mode" of the probes
# recorded in the rows FILTER selects.
probe_summary() {
	local med lo hi
	med=$(csv_column "$1" "$2" probe_ns | median)
	lo=$(csv_column "$1" "$2" probe_ns | sort -g | head -n 1)
	hi=$(csv_column "$1" "$2" probe_ns | sort -g | tail -n 1)
	echo "$med ns ($lo–$hi), $(probe_mode "$med") mode"
}
