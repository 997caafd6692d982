# tests/ecosystem/lib.sh — shared helpers of the ecosystem test scripts (sourced).
failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect WHAT ACTUAL WANTED
expect() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# expect_grep WHAT PATTERN FILE: an extended regex must match a line of FILE.
expect_grep() {
	grep -qE -- "$2" "$3" || { fail "$1: no line matches '$2' in:"; sed 's/^/  | /' "$3" >&2; }
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$1: $failures check(s) failed" >&2
		exit 1
	fi
	echo "$1: ok"
	exit 0
}

unset LD_PRELOAD CNAMUTEX_LIB CNAMUTEX_NUMA CNAMUTEX_THRESHOLD_MS CNAMUTEX_SHUFFLE_BITS \
	CNAMUTEX_SPIN CNAMUTEX_TOPOLOGY CNAMUTEX_STATS CNAMUTEX_PROFILE CNAMUTEX_LOG_FILE \
	CNAMUTEX_REPORT_INTERVAL_S CNAMUTEX_CPU_BATCH_US CNAMUTEX_CPU_BATCH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
