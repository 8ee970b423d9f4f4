#!/usr/bin/env bash
# The DR translation benchmark: `kco apply --dry-run` of a sink file of 1,000 partitions
# captured on another Kafka cluster, translated through a MirrorMaker 2 checkpoints topic of
# 1,000,000 records on the DR bed's broker west (scripts/dr-connect.sh up first).
#
#   scripts/bench-dr.sh [RECORDS] [PARTITIONS]     defaults 1000000 1000
#   scripts/bench-dr.sh --quick                     a smoke run (scripts/test.sh): 20,000
#                                                   records, 50 partitions, the debug build
#                                                   the tests made, 2 runs; no time asserted
#
# A topic `bench-<pid>.checkpoints.internal` is written by the benchmark's own generator
# (benches/dr_checkpoints.rs, 10,000 records per request), uncompacted, so every record is
# read; each partition's file offset lies in the middle of its checkpoints. Prints the median
# time of 5 runs (hyperfine) and the peak RSS (/usr/bin/time -v). The topic stays on west
# (about 60 MB) until `scripts/dr-connect.sh down` deletes its data.
#
# Environment: KCO_TESTBED_DIR (for dr/scram), KCO_DR_KAFKA_PORT (9192), KCO_DR_SASL_PORT
# (9194), KCO_DR_CONNECT_PORT (8090).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
QUICK=0
if [[ ${1:-} == --quick ]]; then
  QUICK=1
  shift
  set -- 20000 50
fi
RECORDS=${1:-1000000}
PARTITIONS=${2:-1000}
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
HOST=127.0.0.1
PLAIN=$HOST:${KCO_DR_KAFKA_PORT:-9192}
SASL=$HOST:${KCO_DR_SASL_PORT:-9194}
W=http://$HOST:${KCO_DR_CONNECT_PORT:-8090}
TOPIC=bench-$$.checkpoints.internal

[[ -f $STATE/dr/scram ]] || { echo "bench-dr.sh: no DR bed ($STATE/dr/scram): run scripts/dr-connect.sh up" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench-dr.sh: hyperfine is needed" >&2; exit 1; }

# The smoke run uses the debug build of the tests (with the fake, as they build it: nothing
# is compiled again but the bench); the full run measures the release build.
PROFILE=release BUILD=(--release) RUNS=5 WARMUP=1
((QUICK)) && PROFILE=debug BUILD=(--features fake) RUNS=2 WARMUP=0
cargo build "${BUILD[@]}" --quiet
cargo build "${BUILD[@]}" --quiet --bench dr_checkpoints
KCO=$ROOT/target/$PROFILE/kco
# The newest build of the bench binary (not its .d file).
GEN=
for f in target/"$PROFILE"/deps/dr_checkpoints-*; do
  [[ $f == *.d ]] && continue
  [[ -z $GEN || $f -nt $GEN ]] && GEN=$f
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kco-bench-dr.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export KCO_DR_KAFKA_PASSWORD
KCO_DR_KAFKA_PASSWORD=$(sed -n 2p "$STATE/dr/scram")
cat >"$WORK/kco.yaml" <<YAML
clusters:
  bench-east: {url: "http://127.0.0.1:9"}   # the files' cluster (never reached)
  w:
    urls: [$W]
    kafka:
      bootstrap: "$SASL"
      sasl: {mechanism: SCRAM-SHA-512, username: kco, password: "\${env:KCO_DR_KAFKA_PASSWORD}"}
    mirrors: {bench-east: {alias: bench, checkpointsTopic: "$TOPIC"}}
YAML
FILE=$WORK/snapshots/bench-east/bench-sink.yaml
start=$SECONDS
"$GEN" --bootstrap "$PLAIN" --topic "$TOPIC" --records "$RECORDS" --partitions "$PARTITIONS" --file "$FILE"
echo "bench-dr.sh: produced $RECORDS checkpoints in $((SECONDS - start)) s" >&2

cd "$WORK"
CMD="$KCO --cluster w apply $FILE --create --dry-run -o json"
$CMD >"$WORK/plan.json"
grep -q '"dr_offset"' "$WORK/plan.json" || { echo "bench-dr.sh: no translation in the plan" >&2; head -c 2000 "$WORK/plan.json" >&2; exit 1; }
if command -v jq >/dev/null; then
  echo "bench-dr.sh: partition 0: $(jq -c '.plan.connectors[0].translation.partitions[0]' "$WORK/plan.json")" >&2
fi
hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$WORK/h.json" "$CMD" >&2
median=$(sed -n 's/.*"median": *\([0-9.]*\).*/\1/p' "$WORK/h.json" | head -1)
/usr/bin/time -v $CMD >/dev/null 2>"$WORK/time.txt"
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$WORK/time.txt")
printf '| translate %s sink partitions through %s checkpoints (apply --dry-run) | %.0f ms | %s MB |\n' \
  "$PARTITIONS" "$RECORDS" "$(echo "$median * 1000" | bc -l)" "$((rss / 1024))"
