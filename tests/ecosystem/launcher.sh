#!/usr/bin/env bash
# tests/ecosystem/launcher.sh LAUNCHER PROBE LIBRARY
# The cnamutex launcher: option checking, the environment it hands on,
# LD_PRELOAD appended once, exec and the program's exit status.
set -u
launcher=$1 probe=$2 library=$3
. "$(dirname "$0")/lib.sh"

# usage_error ARGS...: exit 2 with a message and the usage line, program not run.
usage_error() {
	"$launcher" "$@" >"$work/out" 2>"$work/err"
	local rc=$?
	expect "exit status of: cnamutex $*" "$rc" 2
	expect_grep "message of: cnamutex $*" '^cnamutex: .+' "$work/err"
	expect_grep "usage of: cnamutex $*" '^usage: cnamutex \[' "$work/err"
	grep -q '^pid=' "$work/out" && fail "cnamutex $*: the program ran"
}

usage_error
usage_error --bogus "$probe"
usage_error -x "$probe"
usage_error --numa bogus "$probe"
usage_error --numa= "$probe"
usage_error --numa
usage_error --threshold-ms 0 "$probe"
usage_error --threshold-ms 101 "$probe"
usage_error --threshold-ms=abc "$probe"
usage_error --threshold-ms 99999999999999999999 "$probe"
usage_error --spin -1 "$probe"
usage_error --spin 100000001 "$probe"
usage_error --shuffle-bits 32 "$probe"
usage_error --topology nodes=0 "$probe"
usage_error --topology threads= "$probe"
usage_error --topology bogus "$probe"
usage_error --topology cpus=0//1 "$probe"
usage_error --profile=xml "$probe"
usage_error --log-file "" "$probe"
usage_error --log-file= "$probe"
usage_error --log-file "$work/x%" "$probe"
usage_error --log-file "$work/x%q" "$probe"
usage_error --log-file=%%%
usage_error --log-file
usage_error --report-interval 0 "$probe"
usage_error --report-interval 86401 "$probe"
usage_error --report-interval=1000000000 "$probe"
usage_error --report-interval abc "$probe"
usage_error --stats --
grep -q "expected auto, on or off, not 'bogus'" <("$launcher" --numa bogus "$probe" 2>&1) ||
	fail "--numa bogus: the message does not say what is expected"
usage_error --cpu-batch ON "$probe"
grep -q "expected auto, on or off, not 'bogus'" <("$launcher" --cpu-batch=bogus "$probe" 2>&1) ||
	fail "--cpu-batch=bogus: the message does not say what is expected"
grep -q "unknown '%q' in 'x%q'" <("$launcher" --log-file x%q "$probe" 2>&1) ||
	fail "--log-file x%q: the message does not name the sequence"

# The program's exit status is the launcher's.
for status in 0 3 42; do
	"$launcher" "$probe" "$status" >/dev/null
	expect "exit status of probe $status" "$?" "$status"
	"$launcher" --stats -- "$probe" "$status" >/dev/null 2>&1
	expect "exit status of probe $status after --" "$?" "$status"
done

# exec, not fork: the program has the launcher's pid.
"$launcher" "$probe" >"$work/out" &
launched=$!
wait "$launched"
expect "pid of the program" "$(sed -n 's/^pid=//p' "$work/out")" "$launched"

# Options become the shim's variables, in either spelling.
"$launcher" --threshold-ms 5 --numa on --topology threads=2 --spin 0 --shuffle-bits 3 --cpu-batch off \
	--profile=json --log-file "$work/a%%b.%e.%p" --report-interval 1 "$probe" >"$work/out" 2>/dev/null
for pair in CNAMUTEX_THRESHOLD_MS=5 CNAMUTEX_NUMA=on CNAMUTEX_TOPOLOGY=threads=2 \
	CNAMUTEX_SPIN=0 CNAMUTEX_SHUFFLE_BITS=3 CNAMUTEX_CPU_BATCH=off CNAMUTEX_PROFILE=json CNAMUTEX_STATS='\(unset\)' \
	"CNAMUTEX_LOG_FILE=$work/a%%b.%e.%p" CNAMUTEX_REPORT_INTERVAL_S=1; do
	expect_grep "option for $pair" "^$pair\$" "$work/out"
done
"$launcher" --threshold-ms=100 --numa=off --topology=cpus=0-1,3/2 --spin=100000000 \
	--shuffle-bits=0 --cpu-batch=auto --profile --stats --log-file=/dev/null --report-interval=86400 \
	"$probe" >"$work/out" 2>/dev/null
for pair in CNAMUTEX_THRESHOLD_MS=100 CNAMUTEX_NUMA=off CNAMUTEX_TOPOLOGY=cpus=0-1,3/2 \
	CNAMUTEX_SPIN=100000000 CNAMUTEX_SHUFFLE_BITS=0 CNAMUTEX_CPU_BATCH=auto CNAMUTEX_PROFILE=1 CNAMUTEX_STATS=1 \
	CNAMUTEX_LOG_FILE=/dev/null CNAMUTEX_REPORT_INTERVAL_S=86400; do
	expect_grep "option= for $pair" "^$pair\$" "$work/out"
done

# --stats: the shim's statistics line at exit.
"$launcher" --stats "$probe" >/dev/null 2>"$work/err"
expect_grep "--stats" '^cnamutex: stats acquisitions_fast=[1-9][0-9]* .*wait_mean_us=' "$work/err"
"$launcher" "$probe" >/dev/null 2>"$work/err"
grep -q 'cnamutex: stats' "$work/err" && fail "stats line without --stats"

# --log-file: the report in the program's own file (the launcher execs it,
# so %p is the launcher's pid), nothing on stderr.
mkdir "$work/logs"
"$launcher" --stats --log-file "$work/logs/%e.%p" "$probe" >"$work/out" 2>"$work/err" &
launched=$!
wait "$launched"
expect "stderr with --log-file" "$(cat "$work/err")" ""
expect "files from --log-file" "$(ls "$work/logs")" "$(basename "$probe").$launched"
expect_grep "--log-file" "^cnamutex: stats acquisitions_fast=[1-9][0-9]* .* pid=$launched " \
	"$work/logs/$(basename "$probe").$launched"

# LD_PRELOAD: appended to what is there, never twice.  The program runs
# under the shim with what it was given.
expect_preload() {
	LD_PRELOAD=$1 "$launcher" "$probe" 7 >"$work/out"
	expect "exit status with LD_PRELOAD='$1'" "$?" 7
	expect "LD_PRELOAD='$1'" "$(sed -n 's/^LD_PRELOAD=//p' "$work/out")" "$2"
}
expect_preload "" "$library"
expect_preload libm.so.6 "libm.so.6:$library"
expect_preload "libm.so.6 libdl.so.2" "libm.so.6 libdl.so.2:$library"
# Already listed: with the shim itself in LD_PRELOAD the launcher's own
# shell would run under it (a sanitizer build's shim cannot), so these use
# a plain system library as CNAMUTEX_LIB and a plain program.
plain=$(ldconfig -p 2>/dev/null | awk '$1 == "libm.so.6" && /x86-64|x86_64/ { print $NF; exit }')
[ -f "${plain:-}" ] || plain=$(ldconfig -p 2>/dev/null | awk '$1 == "libm.so.6" { print $NF; exit }')
if [ -f "${plain:-}" ]; then
	expect_listed() {
		local got
		got=$(LD_PRELOAD=$1 CNAMUTEX_LIB=$plain "$launcher" printenv LD_PRELOAD)
		expect "LD_PRELOAD='$1' already listing the library" "$got" "$2"
	}
	expect_listed "$plain" "$plain"
	expect_listed "libdl.so.2 $plain" "libdl.so.2 $plain"
	expect_listed "$plain:libdl.so.2" "$plain:libdl.so.2"
	expect_listed "libdl.so.2:$plain libc.so.6" "libdl.so.2:$plain libc.so.6"
	expect_listed "$plain.old" "$plain.old:$plain"
else
	fail "no libm.so.6 found with ldconfig -p"
fi

# CNAMUTEX_LIB overrides the library; a missing one is an error (125).
CNAMUTEX_LIB=$library "$launcher" "$probe" >"$work/out"
expect "CNAMUTEX_LIB" "$(sed -n 's/^LD_PRELOAD=//p' "$work/out")" "$library"
CNAMUTEX_LIB=$work/missing.so "$launcher" "$probe" >"$work/out" 2>"$work/err"
expect "exit status with a missing library" "$?" 125
expect_grep "missing library" "^cnamutex: library not found: $work/missing.so" "$work/err"

# --help and --version.
"$launcher" --help >"$work/out"
expect "exit status of --help" "$?" 0
for option in --threshold-ms --numa --topology --stats --profile --log-file --report-interval \
	--spin --shuffle-bits; do
	expect_grep "--help mentions $option" "^  $option" "$work/out"
done
expect_grep "--version" '^cnamutex [0-9]+\.[0-9]+' <("$launcher" --version)

finish launcher
