#!/usr/bin/env bash
# tests/model/run.sh MODEL WORKDIR — model-check the lock protocol with spin.
#
# Generates a verifier (pan.c) from MODEL for each check, compiles it and
# runs an exhaustive search.  The real protocol must pass: mutual exclusion
# and no invalid end state with 3 threads (two of them locking twice), and
# with weak fairness every thread finishes.  Each planted bug (MUTATION=k,
# see the model) must be found, or the checks prove nothing.
set -u
model=$(realpath "$1")
work=$2
for tool in spin gcc; do
	command -v "$tool" >/dev/null || { echo "model: $tool not found"; exit 1; }
done
mkdir -p "$work"
cd "$work" || exit 1
failures=0

# check NAME EXPECT(pass|fail) "SPIN -D FLAGS" "CC FLAGS" "PAN FLAGS"
check() {
	local name=$1 expect=$2 spin_flags=$3 cc_flags=$4 pan_flags=$5
	mkdir -p "$name" && cd "$name" || exit 1
	# shellcheck disable=SC2086
	if ! spin -a $spin_flags "$model" >spin.log 2>&1 ||
	   ! gcc -O2 -DCOLLAPSE $cc_flags -o pan pan.c >cc.log 2>&1; then
		echo "model: $name: could not build the verifier"
		cat spin.log cc.log
		failures=$((failures + 1))
		cd ..
		return
	fi
	local start=$SECONDS
	# shellcheck disable=SC2086
	./pan $pan_flags >pan.log 2>&1
	local errors states
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log | head -1)
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -1)
	local verdict=ok
	if grep -q 'max search depth too small' pan.log; then
		verdict="search truncated"
	elif [ -z "$errors" ]; then
		verdict="no result"
	elif [ "$expect" = pass ] && [ "$errors" != 0 ]; then
		verdict="property violated: $(grep -m1 '^pan:1:' pan.log)"
	elif [ "$expect" = fail ] && [ "$errors" = 0 ]; then
		verdict="planted bug not found"
	fi
	printf 'model: %-26s expect %-4s errors=%s states=%s %ss: %s\n' "$name" "$expect" \
		"${errors:-?}" "${states:-?}" $((SECONDS - start)) "$verdict"
	if [ "$verdict" != ok ]; then
		failures=$((failures + 1))
		tail -n 30 pan.log
	fi
	cd ..
}

safety="-DSAFETY"
live="-DNFAIR=3"
check safety-3threads-5locks   pass "-DOPS_THREADS=2" "$safety" "-m1000000"
check liveness-3threads-4locks pass "-DLIVENESS"      "$live"   "-a -f -m1000000"
check unlock-loses-wake        fail "-DMUTATION=1"    "$safety" "-m1000000"
check grant-loses-wake         fail "-DMUTATION=2 -DLIVENESS" "$live" "-a -f -m1000000"
check head-skips-word          fail "-DMUTATION=3"    "$safety" "-m1000000"
check late-secondary-unlink    fail "-DMUTATION=4 -DOPS_THREADS=2" "$safety" "-m1000000"
check dormant-head-cas         fail "-DMUTATION=5 -DLIVENESS" "$live" "-a -f -m1000000"
check requeue-without-mark     fail "-DMUTATION=6 -DLIVENESS" "$live" "-a -f -m1000000"
check withdraw-ignores-grant   fail "-DMUTATION=7"    "$safety" "-m1000000"
check grant-without-token      fail "-DMUTATION=8"    "$safety" "-m1000000"
check handover-drops-sleepers  fail "-DMUTATION=9"    "$safety" "-m1000000"
[ "$failures" -eq 0 ] && echo "model: ok" || echo "model: $failures check(s) failed"
[ "$failures" -eq 0 ]
