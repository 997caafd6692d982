#!/bin/bash
# tests/hostile/fuzz.sh — build the tunable-parser fuzzer with clang's
# libFuzzer and run it briefly from a fixed seed.
#
#   fuzz.sh SOURCE_ROOT WORK_DIR [SECONDS]
set -eu
src=$1 work=$2 seconds=${3:-15}
command -v clang >/dev/null || { echo "FAIL: clang is missing (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir -p "$work/corpus"
numa=()
[ -e /usr/include/numa.h ] && numa=(-DHAVE_LIBNUMA -lnuma)
clang -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-I"$src/interpose" "$src/tests/hostile/fuzz_tunables.c" \
	"$src/interpose/tunables.c" "$src/interpose/topology.c" \
	"${numa[@]}" -o "$work/fuzz_tunables"
# Seeds: the shapes every tunable accepts or nearly accepts.
for s in 0 7 100 4294967295 4294967296 +5 0x10 1e3 " 5" nodes=2 threads=3 cpus=0-3,8/4-7 cpus=3-1 cpus=0/; do
	printf '%s' "$s" >"$work/corpus/$(printf '%s' "$s" | sha1sum | cut -c1-16)"
done
"$work/fuzz_tunables" -max_total_time="$seconds" -seed=1 -max_len=4096 \
	-print_final_stats=1 "$work/corpus" 2>&1 | tail -20
status=${PIPESTATUS[0]}
echo "fuzzer exit status $status"
exit "$status"
