#!/usr/bin/env bash
# tests/ecosystem/profile.sh LAUNCHER HOT_COLD PROBE PYTHON
# The contention profile names the hot mutex first, with hot_path_worker
# as its call site, in the table and in JSON; nothing without --profile.
set -u
launcher=$1 hot_cold=$2 probe=$3 python=$4
. "$(dirname "$0")/lib.sh"
rounds=500

# Table: the first row is the hot mutex, called from hot_path_worker.
"$launcher" --profile "$hot_cold" "$rounds" >"$work/out" 2>"$work/err"
expect "exit status of hot_cold" "$?" 0
hot=$(sed -n 's/^hot //p' "$work/out")
[ -n "$hot" ] || fail "hot_cold printed no address"
expect_grep "profile header" '^cnamutex: profile: [0-9]+ contended mutex' "$work/err"
read -r _ rank address acquired contended share _ <<<"$(grep -m1 -E '^cnamutex: +1 ' "$work/err")"
expect "first row's rank" "${rank:-}" 1
expect "first row's mutex" "${address:-}" "$hot"
[ "${contended:-0}" -gt 0 ] 2>/dev/null || fail "first row: no contended acquisitions"
[ "${acquired:-0}" -ge "${contended:-1}" ] 2>/dev/null || fail "first row: fewer acquisitions than contended ones"
expect_grep "hot call site" "^cnamutex: +1 $hot .* hot_path_worker\+0x[0-9a-f]+ \(hot_cold\)\$" "$work/err"
expect_grep "cold call sites" '^cnamutex: +2 0x[0-9a-f]+ .* cold_path_worker\+0x[0-9a-f]+ \(hot_cold\)$' "$work/err"

# JSON: one machine-readable line with the same answer.
"$launcher" --profile=json "$hot_cold" "$rounds" >"$work/out" 2>"$work/err"
expect "exit status of hot_cold (json)" "$?" 0
hot=$(sed -n 's/^hot //p' "$work/out")
grep '^{"cnamutex_profile":' "$work/err" >"$work/json"
expect "JSON lines" "$(wc -l <"$work/json")" 1
"$python" - "$work/json" "$hot" <<'PY' || fail "JSON profile: see above"
import json, sys
report = json.load(open(sys.argv[1]))["cnamutex_profile"]
top = report["top"]
problems = []
if not top:
    problems.append("no rows")
else:
    first = top[0]
    if first["mutex"] != sys.argv[2]:
        problems.append("first mutex %s, want %s" % (first["mutex"], sys.argv[2]))
    if first["call_site"]["function"] != "hot_path_worker":
        problems.append("first call site %r" % first["call_site"])
    if not first["call_site"]["object"].endswith("/hot_cold"):
        problems.append("first object %r" % first["call_site"]["object"])
    if not 0 < first["contended"] <= first["acquisitions"]:
        problems.append("first counts %r" % first)
    # every contended acquisition is a transfer whose previous owner's node
    # is known: the fast path records it while the profile is on
    for r in top:
        if r["transfers_local"] + r["transfers_remote"] != r["contended"]:
            problems.append("rank %d: transfers %d+%d of %d contended" % (
                r["rank"], r["transfers_local"], r["transfers_remote"], r["contended"]))
    if any(r["call_site"]["function"] != "cold_path_worker" for r in top[1:]):
        problems.append("a later row is not a cold mutex")
    if len(top) < 2 or report["contended_mutexes"] < len(top):
        problems.append("rows %d of %d contended mutexes" % (len(top), report["contended_mutexes"]))
    if [r["rank"] for r in top] != list(range(1, len(top) + 1)):
        problems.append("ranks out of order")
for p in problems:
    print("JSON profile:", p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY

# Off unless asked for; a bad CNAMUTEX_PROFILE is refused with one line.
"$launcher" "$probe" >/dev/null 2>"$work/err"
grep -q 'cnamutex: profile' "$work/err" && fail "profile printed without --profile"
CNAMUTEX_PROFILE=xml "$launcher" "$probe" >/dev/null 2>"$work/err"
expect_grep "bad CNAMUTEX_PROFILE" '^cnamutex: ignoring CNAMUTEX_PROFILE=xml: expected 0, 1 or json; using 0$' "$work/err"
grep -q 'cnamutex: profile' "$work/err" && fail "profile printed with CNAMUTEX_PROFILE=xml"
CNAMUTEX_PROFILE=1 "$launcher" "$probe" >/dev/null 2>"$work/err"
expect_grep "CNAMUTEX_PROFILE=1, nothing contended" '^cnamutex: profile: no contended mutexes$' "$work/err"

finish profile
