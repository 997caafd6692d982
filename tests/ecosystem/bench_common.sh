#!/usr/bin/env bash
# tests/ecosystem/bench_common.sh BENCH_COMMON — the arithmetic behind every
# figure scripts/bench and scripts/sweep-mutexbench print: medians, pair
# ratios, CSV selection, key=value parsing, the runnable-task sampler and
# the clean environment of a run.
set -u
. "$(dirname "$0")/lib.sh"
. "$1"

expect "median of odd count" "$(printf '5\n1\n3\n' | median)" 3
expect "median of even count" "$(printf '4\n1\n3\n10\n' | median)" 3.5
expect "median sorts numerically" "$(printf '100\n9\n20\n' | median)" 20
expect "median of nothing" "$(: | median)" nan
expect "ratio" "$(ratio 3 4)" 0.750
expect "ratio over zero" "$(ratio 3 0)" nan
# Pairs "glibc shim": ratios 2.0, 0.5, 1.0 -> median 1, range 0.5-2.
expect "pair ratios" "$(printf '10 20\n10 5\n7 7\n' | pair_ratios)" "1.000 0.500 2.000"
expect "pair ratios skip a failed glibc run" "$(printf '0 20\n10 5\n' | pair_ratios)" "0.500 0.500 0.500"
expect "pair ratios of nothing" "$(: | pair_ratios)" "nan nan nan"

csv=$work/runs.csv
printf 'variant,threads,ops_per_sec\nglibc,2,100\nshim,2,120\nglibc,16,90\nshim,16,150\nshim,2,130\n' >"$csv"
expect "csv_column selects rows and column by name" \
	"$(csv_column "$csv" 'f["variant"]=="shim" && f["threads"]==2' ops_per_sec | tr '\n' ' ')" "120 130 "
expect "csv_column with a filter matching nothing" \
	"$(csv_column "$csv" 'f["threads"]==4' ops_per_sec)" ""

line="mutexbench threads=16 ops_per_sec=8189203 jain=0.986 verified=1"
expect "kv_get" "$(kv_get ops_per_sec <<<"$line")" 8189203
expect "kv_get missing key" "$(kv_get wait_max_us <<<"$line")" ""
expect "kv_get does not match a key's suffix" "$(kv_get sec <<<"$line")" ""

# The probe's mode, and its summary over the rows a filter selects.
expect "probe mode fast" "$(probe_mode 110)" fast
expect "probe mode slow" "$(probe_mode 468)" slow
expect "probe mode without a figure" "$(probe_mode nan)" unknown
printf 'variant,threads,probe_ns\nglibc,2,120\nshim,2,460\nglibc,2,100\nglibc,8,900\n' >"$csv"
expect "probe summary" "$(probe_summary "$csv" 'f["threads"]==2')" "120 ns (100–460), fast mode"

# A task that stays runnable is counted in every sample, so in the least.
n=$(other_runnable)
[[ $n =~ ^[0-9]+$ ]] || fail "other_runnable printed '$n', not a count"
( while :; do :; done ) &
hog=$!
n=$(other_runnable)
kill "$hog"
wait "$hog" 2>/dev/null
[[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || fail "other_runnable missed a busy loop: '$n'"

# run_clean passes only PATH, HOME and the named variables.
env_seen=$(LD_PRELOAD=/nonexistent/stray.so CNAMUTEX_SPIN=7 GLIBC_TUNABLES=glibc.malloc.arena_max=1 \
	run_clean CNAMUTEX_NUMA=on -- env 2>/dev/null)
env_seen=$(cut -d= -f1 <<<"$env_seen" | sort | tr '\n' ' ')
expect "run_clean environment" "$env_seen" "CNAMUTEX_NUMA HOME PATH "

finish bench_common
