#!/usr/bin/env bash
# Apply of 20 FileStream sources on a real Connect worker: kco against the sequential hand
# procedure with curl (stop, poll status every 0.2 s, PATCH, resume, poll), side by side.
# Called by scripts/bench.sh with KCO_BENCH_TESTBED_URL; prints one Markdown table row.
#
#   scripts/bench-testbed-apply.sh KCO_BINARY CONNECT_URL WORK_DIR [SOURCES]
#
# Creates connectors `bench-src-01` .. `bench-src-20` (SOURCES of them; scripts/test.sh's smoke
# run takes 2) and deletes them at the end.
set -euo pipefail
KCO=$1 URL=$2 WORK=$3
N=${4:-20}
mkdir -p "$WORK" && cd "$WORK"
names=()
for i in $(seq 1 "$N"); do names+=("$(printf 'bench-src-%02d' "$i")"); done
cleanup() { for n in "${names[@]}"; do curl -s -o /dev/null -X DELETE "$URL/connectors/$n" || true; done; }
trap cleanup EXIT
for n in "${names[@]}"; do
  seq 1 50 >"$WORK/$n.txt"
  curl -sSf -o /dev/null -X POST -H 'Content-Type: application/json' "$URL/connectors" \
    -d "{\"name\":\"$n\",\"config\":{\"connector.class\":\"org.apache.kafka.connect.file.FileStreamSourceConnector\",\"file\":\"$WORK/$n.txt\",\"topic\":\"$n\",\"tasks.max\":\"1\"}}"
done
sleep 5 # the sources read their file and flush offsets (every second on the test bed)
"$KCO" --url "$URL" --cluster tb -q snapshot 'bench-src-*' --dir s >/dev/null
mkdir -p m/tb
for n in "${names[@]}"; do sed 's/position: [0-9]*/position: 3/' "s/tb/$n.yaml" >"m/tb/$n.yaml"; done
"$KCO" -q fmt m/tb >/dev/null

kco_apply() {
  local t0 t1
  sleep 3 # the sources read on from position 3 and flush: every partition differs again
  t0=$(date +%s.%N)
  "$KCO" --url "$URL" --cluster tb -q apply m/tb --yes --backup-dir bk >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
hand_apply() {
  local t0 t1
  sleep 3
  t0=$(date +%s.%N)
  for n in "${names[@]}"; do
    curl -sSf -o /dev/null -X PUT "$URL/connectors/$n/stop"
    until curl -sSf "$URL/connectors/$n/status" |
      jq -e '.connector.state == "STOPPED" and (.tasks | length) == 0' >/dev/null; do sleep 0.2; done
    curl -sSf -o /dev/null -X PATCH -H 'Content-Type: application/json' "$URL/connectors/$n/offsets" \
      -d "{\"offsets\":[{\"partition\":{\"filename\":\"$WORK/$n.txt\"},\"offset\":{\"position\":7}}]}"
    curl -sSf -o /dev/null -X PUT "$URL/connectors/$n/resume"
    until curl -sSf "$URL/connectors/$n/status" | jq -e '.connector.state == "RUNNING"' >/dev/null; do
      sleep 0.2
    done
  done
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
k1=$(kco_apply)
h=$(hand_apply)
k2=$(kco_apply)
k=$(awk -v a="$k1" -v b="$k2" 'BEGIN { printf "%.2f", (a + b) / 2 }')
sources=sources
((N == 1)) && sources=source
echo "| apply, $N FileStream $sources on the real test bed (stop, wait, patch, verify, resume each) | $k s (runs: $k1 s, $k2 s) | sequential curl procedure, 0.2 s polls: $h s: $(awk -v h="$h" -v k="$k" 'BEGIN { printf "%.1f", h / k }')x faster | \`kco apply DIR --yes\` |"
