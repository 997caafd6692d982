#!/bin/sh
# A seed replays exactly: what `cnasim --explore --seed S` does alone, in a
# new process, is what seed S did as one of a sequence (the same outcome,
# event count and trace hash), so a failing seed from a long run can be
# debugged by itself.  Seeds 8, 16, ... are the long runs on two nodes,
# which earlier runs in the process used to perturb (the queue table's
# page notes and heap addresses).
set -eu
cnasim=$1
count=${2:-48}
all=$("$cnasim" --explore --seeds "$count" --verbose)
failed=0
checked=0
for seed in $(seq 3 5 "$count") $(seq 8 8 "$count"); do
	in_sequence=$(printf '%s\n' "$all" | grep "^seed $seed:")
	alone=$("$cnasim" --explore --seed "$seed" | grep "^seed $seed:")
	checked=$((checked + 1))
	if [ "$in_sequence" != "$alone" ]; then
		failed=$((failed + 1))
		echo "seed $seed differs:"
		echo "  in a sequence: $in_sequence"
		echo "  alone:         $alone"
	fi
done
echo "$checked seeds replayed alone, $failed differ"
[ "$failed" -eq 0 ]
