#!/bin/sh
# The sweep's CSV is what scripts/simulate publishes: the exact header, one
# row per machine, workload and thread count, sane values; and with one
# thread (nothing contended) the shim and glibc do the same work, so the
# model must give them the same ops/s.
set -eu
cnasim=$1
csv=${TMPDIR:-/tmp}/cnasim-sweep-$$.csv
trap 'rm -f "$csv"' EXIT
"$cnasim" --machine 4s,2c --workload tiny,leveldb --threads 1,4 --duration-ms 2 \
	--warmup-ms 1 --runs 2 --csv "$csv" >/dev/null
header='machine,workload,threads,glibc_ops,adaptive_ops,mcs_ops,shim_ops,shim_local_share,shim_jain,shim_max_wait_us'
[ "$(head -n 1 "$csv")" = "$header" ] || { echo "wrong header: $(head -n 1 "$csv")"; exit 1; }
rows=$(tail -n +2 "$csv" | wc -l)
[ "$rows" -eq 8 ] || { echo "expected 8 rows, got $rows"; exit 1; }
tail -n +2 "$csv" | awk -F, '
	NF != 10 { print "row with " NF " fields: " $0; bad = 1; next }
	!($1 == "4s" || $1 == "2c") || !($2 == "tiny" || $2 == "leveldb") {
		print "unknown machine or workload: " $0; bad = 1 }
	$4 <= 0 || $5 <= 0 || $6 <= 0 || $7 <= 0 { print "no ops: " $0; bad = 1 }
	$8 < 0 || $8 > 1 || $9 <= 0 || $9 > 1 { print "share or Jain out of range: " $0; bad = 1 }
	$3 == 1 && $4 != $7 { print "one thread, yet shim and glibc differ: " $0; bad = 1 }
	END { exit bad }'
echo "sweep CSV: header and $rows rows as published"
