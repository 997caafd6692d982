#!/bin/bash
# tests/hostile/realprogs.sh — multithreaded Debian programs with their own
# self-checks, run with and without the shim: same exit status, same output.
#
#   realprogs.sh SHIM pigz|xz|stress-mutex|stress-pthread
set -u
shim=$1 program=$2
work=$(mktemp -d /tmp/cnamutex-realprogs.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || fail "no shim at $shim"
export -n LD_PRELOAD CNAMUTEX_STATS

# A compressible, reproducible input of about 25 MiB: text from a fixed seed.
make_input() {
	awk 'BEGIN { srand(7); for (i = 0; i < 1000000; i++)
		printf "%d line %x %s\n", i, int(rand() * 4294967296), (rand() < 0.5 ? "even" : "odd") }' \
		>"$work/input"
}

# Run "$@" plainly, then under the shim with statistics on; keeps the
# status of each in plain_rc and shim_rc, the shim's stderr in $work/shim.err.
run_both() {
	local out=$1; shift
	"$@" >"$work/plain.$out" 2>"$work/plain.err"
	plain_rc=$?
	env LD_PRELOAD="$shim" CNAMUTEX_STATS=1 "$@" >"$work/shim.$out" 2>"$work/shim.err"
	shim_rc=$?
	echo "$1: exit $plain_rc without the shim, $shim_rc with it"
	[ "$plain_rc" -eq "$shim_rc" ] || { cat "$work/shim.err" >&2; fail "exit status differs"; }
}

# The exit line must be there (one per process that ran), and well formed.
check_stats() {
	local lines
	lines=$(grep -c '^cnamutex: stats acquisitions_fast=[0-9]* acquisitions_spun=[0-9]* acquisitions_slow=[0-9]*' "$work/shim.err")
	[ "$lines" -ge 1 ] || { cat "$work/shim.err" >&2; fail "no stats line under the shim"; }
	grep '^cnamutex: stats' "$work/shim.err"
	if grep -v '^cnamutex: stats' "$work/shim.err" | grep -q '^cnamutex:'; then
		cat "$work/shim.err" >&2
		fail "the shim complained"
	fi
}

# Sum of the contended acquisitions (spun, queued, waited on the word)
# over all stats lines.
contended() {
	sed -n 's/^cnamutex: stats .*acquisitions_spun=\([0-9]*\) acquisitions_slow=\([0-9]*\) .*acquisitions_word=\([0-9]*\) .*/\1 \2 \3/p' \
		"$work/shim.err" | awk '{ s += $1 + $2 + $3 } END { print s + 0 }'
}

sums_equal() {
	local a b
	a=$(sha256sum <"$1" | cut -d' ' -f1)
	b=$(sha256sum <"$2" | cut -d' ' -f1)
	echo "sha256 $a / $b"
	[ "$a" = "$b" ]
}

case $program in
pigz)
	# Small blocks and more threads than cores: the work queue contends.
	make_input
	run_both gz pigz -p 8 -b 32 -c "$work/input"
	[ "$plain_rc" -eq 0 ] || fail "pigz failed"
	check_stats
	# Eight compressing threads on small blocks always meet on pigz's locks.
	echo "contended acquisitions: $(contended)"
	[ "$(contended)" -gt 0 ] || fail "pigz never contended, so the shim's contended path was not tried"
	sums_equal "$work/plain.gz" "$work/shim.gz" || fail "compressed output differs"
	run_both out pigz -p 8 -d -c "$work/shim.gz"
	[ "$plain_rc" -eq 0 ] || fail "pigz -d failed"
	check_stats
	sums_equal "$work/input" "$work/shim.out" || fail "round trip differs from input"
	sums_equal "$work/plain.out" "$work/shim.out" || fail "decompressed output differs"
	env LD_PRELOAD="$shim" pigz -t "$work/shim.gz" || fail "pigz -t refuses the output"
	;;
xz)
	# xz closes stderr before it exits, so the stats line cannot show; the
	# check is the output: identical bytes, and xz's own integrity test.
	# xz is slower than pigz: the first 8 MiB of the input, in 8 blocks.
	make_input
	head -c 8M "$work/input" >"$work/input.8m" && mv "$work/input.8m" "$work/input"
	run_both xz xz -T4 -0 --block-size=1MiB -c "$work/input"
	[ "$plain_rc" -eq 0 ] || fail "xz failed"
	sums_equal "$work/plain.xz" "$work/shim.xz" || fail "compressed output differs"
	run_both out xz -T4 -d -c "$work/shim.xz"
	[ "$plain_rc" -eq 0 ] || fail "xz -d failed"
	sums_equal "$work/input" "$work/shim.out" || fail "round trip differs from input"
	env LD_PRELOAD="$shim" xz -T4 -t "$work/shim.xz" || fail "xz -t refuses the output"
	;;
stress-mutex|stress-pthread)
	# stress-ng's own verification (--verify) of mutual exclusion;
	# bounded by operation counts, with a time limit as a backstop.
	if [ "$program" = stress-mutex ]; then
		args=(--mutex 1 --mutex-ops 200000)
	else
		args=(--pthread 2 --pthread-max 8 --pthread-ops 20000)
	fi
	run_both out stress-ng "${args[@]}" --verify --metrics-brief --timeout 15s
	[ "$plain_rc" -eq 0 ] || { cat "$work/plain.err" >&2; fail "stress-ng failed without the shim"; }
	grep -q 'successful run completed' "$work/shim.err" "$work/shim.out" ||
		{ cat "$work/shim.err" >&2; fail "stress-ng did not report success"; }
	grep -h 'metrc:.*\(mutex\|pthread\) ' "$work/shim.err" "$work/shim.out" || true
	check_stats
	echo "contended acquisitions: $(contended)"
	;;
*)
	fail "unknown program $program"
	;;
esac
echo "$program: same status and output with and without the shim"
