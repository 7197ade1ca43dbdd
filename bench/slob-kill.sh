#!/usr/bin/env bash
# Kills a SLOB run (--workload slob) with SIGKILL after a random 0.5–2 s and
# verifies its target and redo logs: how often does verify call what the kill
# left "damage"? A fresh copy of one laid-out target per trial.
#   bench/slob-kill.sh DIR TRIALS [DBIO] [extra run options…]
# DIR: a directory on the filesystem under test (e.g. /dev/shm/sk, or a
# mounted loop filesystem); it keeps the template, the last trial and each
# damaged trial's verify output (damage-N.txt) there. Prints one line per
# trial and a total.
set -u
dir=$1 trials=$2 dbio=${3:-target/debug/dbio}
shift 3 2>/dev/null || shift $#
mkdir -p "$dir"
db=$dir/s.sqlite
opts=(--workload slob --scale 2000 --schemas 2 --update-pct 100
      --redo-file-size 8M --db "$db" --quiet "$@")
tmpl=$dir/template
if [ ! -d "$tmpl" ]; then
  "$dbio" run --target "$tmpl" --time 1 "${opts[@]}" > /dev/null || exit 1
fi
false_data=0 false_redo=0
for i in $(seq 1 "$trials"); do
  t=$dir/trial
  rm -rf "$t"; cp -a "$tmpl" "$t"
  "$dbio" run --target "$t" --time 30 "${opts[@]}" > /dev/null 2>&1 &
  pid=$!
  sleep "$(awk -v s=$RANDOM 'BEGIN{srand(s); printf "%.2f", 0.5 + 1.5*rand()}')"
  kill -9 $pid; wait $pid 2>/dev/null
  "$dbio" verify --target "$t" --db "$db" --quiet > "$dir/v-data.txt" 2>&1; d=$?
  "$dbio" verify --target "$t/dbio-redo" --db "$db" --quiet > "$dir/v-redo.txt" 2>&1; r=$?
  [ $d -ne 0 ] && { false_data=$((false_data + 1)); cp "$dir/v-data.txt" "$dir/damage-$i.txt"; }
  [ $r -ne 0 ] && { false_redo=$((false_redo + 1)); cp "$dir/v-redo.txt" "$dir/redo-damage-$i.txt"; }
  echo "trial $i: data exit $d, redo exit $r; $(grep -E '^in flight|^result' "$dir/v-data.txt" | tr '\n' ' ')"
done
echo "damage called in data: $false_data of $trials; in redo: $false_redo of $trials"
