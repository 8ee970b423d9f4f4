#!/usr/bin/env bash
# Every performance target of kco, side by side with its reference, in one run.
#
#   scripts/bench.sh            full run (about 5 minutes); rewrites the tables of
#                               docs/benchmarks.md between the `bench:` markers
#   scripts/bench.sh --quick    a smoke run on small sizes (under a minute): checks that every
#                               workload still runs; prints, writes nothing, asserts no time
#   scripts/bench.sh --fleet-only   the fleet rows only (Kafka Connect, then the same fleet as
#                               Confluent Cloud's managed connectors); prints, writes nothing
#
# The instrument is the fake Connect of kco (src/fake/) over HTTP, started by
# `cargo bench --bench fleet -- --serve`: it answers every request after a fixed delay
# (Fault::on("*", "*").delay), keep-alive, one write per response, TCP_NODELAY, and answers
# `Expect: 100-continue` at once, as Connect's Jetty does. Timings are medians of hyperfine
# runs; peak RSS comes from `/usr/bin/time -v`. Nothing here is a test: no time is asserted.
#
# The apply on a real worker runs when KCO_BENCH_TESTBED_URL points at a Connect cluster of
# the test bed (scripts/local-connect.sh) that may be written to: it creates 20 FileStream
# sources `bench-src-NN` there, and removes them at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

QUICK=0 FLEET_ONLY=0
for arg in "$@"; do
  case $arg in
    --quick) QUICK=1 ;;
    --fleet-only) FLEET_ONLY=1 ;;
    *) echo "bench.sh: unknown option $arg (--quick, --fleet-only)" >&2; exit 2 ;;
  esac
done
if ((QUICK)); then
  CONNECTORS=60 PARTITIONS=10000 LATENCY=2 CLUSTERS=3 PER_CLUSTER=60 CLOUD=60 RUNS=2 SCALE=(2000 20000)
else
  CONNECTORS=1000 PARTITIONS=100000 LATENCY=20 CLUSTERS=5 PER_CLUSTER=200 CLOUD=300 RUNS=3 SCALE=(10000 1000000)
fi

for tool in hyperfine curl jq; do
  command -v "$tool" >/dev/null || { echo "bench.sh: $tool is needed (apt-get install -y $tool)" >&2; exit 1; }
done
[[ -x /usr/bin/time ]] || { echo "bench.sh: /usr/bin/time is needed (apt-get install -y time)" >&2; exit 1; }

# The smoke run uses the debug build that scripts/test.sh's tests have just made (with the
# fake, as the tests build it: nothing is compiled again; no release build in CI); the full
# run measures the release build.
PROFILE=release
BUILD=(--release)
((QUICK)) && PROFILE=debug BUILD=(--features fake)
cargo build "${BUILD[@]}" --quiet
cargo build "${BUILD[@]}" --quiet --features fake --bench fleet
KCO=$ROOT/target/$PROFILE/kco
# The newest build of the bench binary (not its .d file).
BENCH=
for f in target/"$PROFILE"/deps/fleet-*; do
  [[ $f == *.d ]] && continue
  [[ -z $BENCH || $f -nt $BENCH ]] && BENCH=$f
done
BENCH=$ROOT/$BENCH

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kco-bench.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# Starts a fake fleet (N connectors), a wide sink (P partitions), K more fleets and a fleet
# of $CLOUD managed connectors served as Confluent Cloud; sets FLEET, WIDE, CLUSTER_URLS and
# CLOUD_SERVED (its endpoint, environment, cluster, API key and secret).
serve() {
  local n=$1 p=$2 k=$3
  local out=$WORK/serve-$n-$k.txt
  "$BENCH" --serve --connectors "$n" --partitions "$p" --latency-ms "$LATENCY" --clusters "$k" \
    --cluster-connectors "$PER_CLUSTER" --cloud-connectors "$CLOUD" \
    >"$out" 2>/dev/null &
  PIDS+=($!)
  for _ in $(seq 600); do
    (($(wc -l <"$out") >= 3 + k)) && break
    sleep 0.1
  done
  FLEET=$(sed -n 's/^fleet: //p' "$out")
  WIDE=$(sed -n 's/^wide sink: //p' "$out")
  mapfile -t CLUSTER_URLS < <(sed -n 's/^cluster [0-9]*: //p' "$out")
  read -r -a CLOUD_SERVED < <(sed -n 's/^confluent cloud: //p' "$out")
}

ROWS=$WORK/rows.md
: >"$ROWS"
# median seconds of a command (hyperfine; shell mode when it holds a pipe)
median() {
  local runs=$1
  shift
  local json=$WORK/h.json
  hyperfine --style none --runs "$runs" --export-json "$json" "$@" >/dev/null 2>&1 || {
    echo "bench.sh: failed: $*" >&2
    hyperfine --runs 1 "$@" >&2 || true
    exit 1
  }
  jq -r '.results[0].median' "$json"
}
# peak RSS in MB of one run
rss() {
  /usr/bin/time -f '%M' -o "$WORK/rss" bash -c "$1" >/dev/null 2>&1 || true
  tail -1 "$WORK/rss" | awk '{printf "%.0f", $1/1024}'
}
fmt_s() { awk -v s="$1" 'BEGIN { if (s < 1) printf "%.0f ms", s*1000; else printf "%.2f s", s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a/b }'; }
row() { echo "| $* |" >>"$ROWS"; echo "| $* |"; }

cd "$WORK"
echo "== fleet: $CONNECTORS connectors, $LATENCY ms per request" >&2
serve "$CONNECTORS" "$PARTITIONS" "$CLUSTERS"
PAR=32
BOUND=$(awk -v n="$CONNECTORS" -v p=$PAR -v l="$LATENCY" 'BEGIN { printf "%.3f", (2 + int((n + p - 1) / p)) * l / 1000 }')
K_SNAP=$(median "$RUNS" -N --prepare "rm -rf $WORK/f" "$KCO --url $FLEET --cluster bench -q snapshot --dir $WORK/f")
K_DIFF=$(median "$RUNS" -N "$KCO --url $FLEET --cluster bench -q diff --dir $WORK/f")
mkdir -p hand
# The bound as this instrument and machine deliver it: the same requests from one curl process
# with 32 in flight (curl's event loop, no files, no parsing).
{
  echo "url = \"$FLEET/\""
  echo "url = \"$FLEET/connectors?expand=status&expand=info\""
} >serial.cfg
for i in $(seq 0 $((CONNECTORS - 1))); do printf 'url = "%s/connectors/conn-%05d/offsets"\n' "$FLEET" "$i"; done >par.cfg
CURL_PAR=$(median "$RUNS" "curl -s -o /dev/null -o /dev/null -K serial.cfg && curl -s --parallel --parallel-max $PAR -K par.cfg >/dev/null")
HAND_SNAP=$(median 1 "cd $WORK/hand && curl -sSf $FLEET/connectors | jq -r '.[]' | while read -r n; do curl -sSf $FLEET/connectors/\$n/offsets -o \$n.json; done")
row "snapshot, $CONNECTORS connectors, ${LATENCY} ms/request, default concurrency ($PAR) | $(fmt_s "$K_SNAP") | nominal bound $(fmt_s "$BOUND"): $(ratio "$K_SNAP" "$BOUND")x; same requests by \`curl --parallel-max $PAR\` $(fmt_s "$CURL_PAR"): $(ratio "$K_SNAP" "$CURL_PAR")x; curl loop $(fmt_s "$HAND_SNAP"): $(ratio "$HAND_SNAP" "$K_SNAP")x faster | \`kco snapshot\`"
row "diff, $CONNECTORS connectors, ${LATENCY} ms/request, default concurrency ($PAR) | $(fmt_s "$K_DIFF") | nominal bound $(fmt_s "$BOUND"): $(ratio "$K_DIFF" "$BOUND")x; \`curl --parallel-max $PAR\` $(fmt_s "$CURL_PAR"): $(ratio "$K_DIFF" "$CURL_PAR")x; curl loop $(fmt_s "$HAND_SNAP"): $(ratio "$HAND_SNAP" "$K_DIFF")x faster | \`kco diff\`"

echo "== Confluent Cloud: $CLOUD managed connectors, $LATENCY ms per request" >&2
# The same fleet served as Confluent Cloud (the fake in that mode, its API key checked), read
# through a `confluentCloud:` cluster of kco.yaml. No `GET /` there: the bound is the listing,
# then the offsets reads $PAR at a time. The requests kco sent are counted from its -v trace,
# so that a re-read of offsets observed too long ago shows in the figures.
mkdir -p "$WORK/cloud"
read -r C_URL C_ENV C_LKC C_KEY C_SECRET <<<"${CLOUD_SERVED[*]}"
cat >"$WORK/cloud/kco.yaml" <<YAML
clusters:
  cloud:
    confluentCloud:
      environment: $C_ENV
      kafkaCluster: $C_LKC
      apiKey: \${env:KCO_BENCH_CLOUD_KEY}
      apiSecret: \${env:KCO_BENCH_CLOUD_SECRET}
      endpoint: $C_URL
YAML
export KCO_BENCH_CLOUD_KEY=$C_KEY KCO_BENCH_CLOUD_SECRET=$C_SECRET
# Each run is short and this machine is shared: 10 runs a median, for kco and curl alike. The
# same number of connectors read from the Kafka Connect fleet, in the same run, is the
# reference "as for Connect" (its bound has one more round trip, `GET /`).
C_RUNS=10
((QUICK)) && C_RUNS=$RUNS
C_BOUND=$(awk -v n="$CLOUD" -v p=$PAR -v l="$LATENCY" 'BEGIN { printf "%.3f", (1 + int((n + p - 1) / p)) * l / 1000 }')
K_CSNAP=$(median "$C_RUNS" -N --prepare "rm -rf $WORK/cloud/snapshots" "$KCO --config $WORK/cloud/kco.yaml --cluster cloud -q snapshot --dir $WORK/cloud/snapshots")
rm -rf "$WORK/cloud/snapshots"
"$KCO" --config "$WORK/cloud/kco.yaml" --cluster cloud -v snapshot --dir "$WORK/cloud/snapshots" >/dev/null 2>"$WORK/cloud/trace"
C_REQS=$(grep -c ': ok (' "$WORK/cloud/trace" || true)
C_READS=$(grep -c '/offsets: ok (' "$WORK/cloud/trace" || true)
C_BASE="$C_URL/connect/v1/environments/$C_ENV/clusters/$C_LKC"
{
  echo "user = \"$C_KEY:$C_SECRET\""
  for i in $(seq 0 $((CLOUD - 1))); do printf 'url = "%s/connectors/conn-%05d/offsets"\n' "$C_BASE" "$i"; done
} >cloud-par.cfg
C_CURL=$(median "$C_RUNS" "curl -s -o /dev/null -u $C_KEY:$C_SECRET '$C_BASE/connectors?expand=id,info,status' && curl -s --parallel --parallel-max $PAR -K cloud-par.cfg >/dev/null")
NAMES=$(for i in $(seq 0 $((CLOUD - 1))); do printf 'conn-%05d ' "$i"; done)
K_KSNAP=$(median "$C_RUNS" -N --prepare "rm -rf $WORK/cloud/connect" "$KCO --url $FLEET --cluster bench -q snapshot $NAMES--dir $WORK/cloud/connect")
K_BOUND=$(awk -v n="$CLOUD" -v p=$PAR -v l="$LATENCY" 'BEGIN { printf "%.3f", (2 + int((n + p - 1) / p)) * l / 1000 }')
row "snapshot on Confluent Cloud, $CLOUD managed connectors, ${LATENCY} ms/request, default concurrency ($PAR) | $(fmt_s "$K_CSNAP") | nominal bound $(fmt_s "$C_BOUND") (the listing, then $CLOUD offsets reads $PAR at a time): $(ratio "$K_CSNAP" "$C_BOUND")x; same requests by \`curl --parallel-max $PAR\` $(fmt_s "$C_CURL"): $(ratio "$K_CSNAP" "$C_CURL")x; the same $CLOUD connectors on Kafka Connect $(fmt_s "$K_KSNAP"), bound $(fmt_s "$K_BOUND"): $(ratio "$K_KSNAP" "$K_BOUND")x; kco sent $C_REQS requests, $C_READS of them offsets reads (medians of $C_RUNS runs) | \`kco snapshot\` (\`confluentCloud:\` cluster)"
# The diff reads the same and writes nothing: no flush of the file system, whose time on a
# shared disk is whatever else is being written there.
K_CDIFF=$(median "$C_RUNS" -N "$KCO --config $WORK/cloud/kco.yaml --cluster cloud -q diff --dir $WORK/cloud/snapshots")
K_KDIFF=$(median "$C_RUNS" -N "$KCO --url $FLEET --cluster bench -q diff $NAMES--dir $WORK/cloud/connect")
row "diff on Confluent Cloud, $CLOUD managed connectors, ${LATENCY} ms/request, default concurrency ($PAR) | $(fmt_s "$K_CDIFF") | nominal bound $(fmt_s "$C_BOUND"): $(ratio "$K_CDIFF" "$C_BOUND")x; \`curl --parallel-max $PAR\` $(fmt_s "$C_CURL"): $(ratio "$K_CDIFF" "$C_CURL")x; the same $CLOUD connectors on Kafka Connect $(fmt_s "$K_KDIFF"), bound $(fmt_s "$K_BOUND"): $(ratio "$K_KDIFF" "$K_BOUND")x (medians of $C_RUNS runs) | \`kco diff\` (\`confluentCloud:\` cluster)"

if ((FLEET_ONLY)); then
  exit 0
fi

echo "== many clusters: $CLUSTERS x $PER_CLUSTER" >&2
{
  echo "clusters:"
  i=0
  for u in "${CLUSTER_URLS[@]}"; do echo "  c$i: {urls: [$u]}"; i=$((i + 1)); done
} >kco.yaml
SINGLE=$(median "$RUNS" -N --prepare "rm -rf $WORK/snapshots" "$KCO --cluster c0 -q snapshot")
ALL=$(median "$RUNS" -N --prepare "rm -rf $WORK/snapshots" "$KCO -q snapshot --all-clusters")
row "snapshot --all-clusters, $CLUSTERS clusters x $(ls snapshots/c0 | wc -l) connectors | $(fmt_s "$ALL") | one cluster $(fmt_s "$SINGLE"): $(ratio "$ALL" "$SINGLE")x | \`kco snapshot --all-clusters\`"
ALLD=$(median "$RUNS" -N -i "$KCO -q diff --all-clusters")
SINGLED=$(median "$RUNS" -N -i "$KCO --cluster c0 -q diff")
row "diff --all-clusters, $CLUSTERS clusters | $(fmt_s "$ALLD") | one cluster $(fmt_s "$SINGLED"): $(ratio "$ALLD" "$SINGLED")x | \`kco diff --all-clusters\`"

echo "== one sink of $PARTITIONS partitions" >&2
W="--url $WIDE --cluster w"
K_WSNAP=$(median "$RUNS" -N --prepare "rm -rf $WORK/w" "$KCO $W -q snapshot --dir $WORK/w")
K_WSNAP_RSS=$(rss "rm -rf $WORK/w; $KCO $W -q snapshot --dir $WORK/w")
J_WSNAP=$(median "$RUNS" "curl -sSf $WIDE/connectors/wide-sink/offsets | jq -S . > $WORK/live.json")
J_WSNAP_RSS=$(rss "curl -sSf $WIDE/connectors/wide-sink/offsets | jq -S . > $WORK/live.json")
row "snapshot, 1 sink x $PARTITIONS partitions | $(fmt_s "$K_WSNAP"), $K_WSNAP_RSS MB | \`curl \| jq -S\` $(fmt_s "$J_WSNAP"), $J_WSNAP_RSS MB | \`kco snapshot\`"
FILE=$WORK/w/w/wide-sink.yaml
mkdir -p moved/w moved2/w
sed 's/kafka_offset: 1/kafka_offset: 2/' "$FILE" >moved/w/wide-sink.yaml
sed 's/kafka_offset: 1/kafka_offset: 3/' "$FILE" >moved2/w/wide-sink.yaml
"$KCO" -q fmt moved/w/wide-sink.yaml moved2/w/wide-sink.yaml >/dev/null
jq '.offsets |= map(.offset.kafka_offset += 1000000)' live.json >moved.json
K_WDIFF=$(median "$RUNS" -N -i "$KCO $W diff moved/w/wide-sink.yaml")
K_WDIFF_RSS=$(rss "$KCO $W diff moved/w/wide-sink.yaml")
J_WDIFF=$(median "$RUNS" -i "bash -c 'diff <(jq -S . moved.json) <(curl -sSf $WIDE/connectors/wide-sink/offsets | jq -S .)'")
J_WDIFF_RSS=$(rss "diff <(jq -S . moved.json) <(curl -sSf $WIDE/connectors/wide-sink/offsets | jq -S .)")
row "diff, every partition moved, 1 sink x $PARTITIONS | $(fmt_s "$K_WDIFF"), $K_WDIFF_RSS MB | \`jq -S\` both sides + \`diff\` $(fmt_s "$J_WDIFF"), $J_WDIFF_RSS MB | \`kco diff FILE\` (text, unified YAML)"
# Each timed run applies two files in turn, so that every apply moves every partition; the
# blind PATCH sends one body (stop and resume around it, as Connect requires).
K_WAPPLY2=$(median "$RUNS" \
  "$KCO $W -q apply moved/w/wide-sink.yaml --yes --backup-dir $WORK/bk && $KCO $W -q apply moved2/w/wide-sink.yaml --yes --backup-dir $WORK/bk")
K_WAPPLY=$(awk -v s="$K_WAPPLY2" 'BEGIN { printf "%.4f", s / 2 }')
jq '{offsets: [.offsets[] | {partition, offset}]}' moved.json >patch.json
C_WAPPLY=$(median "$RUNS" "curl -sSf -X PUT $WIDE/connectors/wide-sink/stop && curl -sSf -X PATCH -H 'Content-Type: application/json' --data-binary @patch.json $WIDE/connectors/wide-sink/offsets >/dev/null && curl -sSf -X PUT $WIDE/connectors/wide-sink/resume")
row "apply, every partition moved, 1 sink x $PARTITIONS | $(fmt_s "$K_WAPPLY") | blind stop + PATCH + resume with curl $(fmt_s "$C_WAPPLY"): $(ratio "$K_WAPPLY" "$C_WAPPLY")x | \`kco apply FILE --yes\`"
K_VAL=$(median "$RUNS" -N "$KCO -q validate $FILE")
K_FMT=$(median "$RUNS" -N "$KCO -q fmt --check $FILE")
row "validate / fmt --check, 1 sink x $PARTITIONS | $(fmt_s "$K_VAL") / $(fmt_s "$K_FMT") | - | \`kco validate FILE\`, \`kco fmt --check FILE\`"

echo "== cost per partition: ${SCALE[*]}" >&2
per=()
for n in "${SCALE[@]}"; do
  d=$WORK/scale-$n
  mkdir -p "$d/s/c" && cd "$d"
  git init -q . && git config user.email b@b && git config user.name b
  gen() { # canonical sink file of $1 partitions, offsets shifted by $2, unsealed
    awk -v n="$1" -v s="$2" 'BEGIN {
      print "# yaml-language-server: $schema=../../schemas/connector-offsets-v1.json"
      print "apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: big\n  cluster: c\n  type: sink\noffsets:"
      for (i = 0; i < n; i++) {
        printf "- partition:\n    kafka_partition: %d\n    kafka_topic: t-%06d\n  offset:\n    kafka_offset: %d\n", i % 100, int(i / 100), 1000000 + i + s
      }
      print "checksum: sha256:0000000000000000000000000000000000000000000000000000000000000000"
    }'
  }
  gen "$n" 0 >s/c/big.yaml && "$KCO" -q fmt s/c/big.yaml >/dev/null
  git add -A && git commit -qm base
  gen "$n" 5 >s/c/big.yaml && "$KCO" -q fmt s/c/big.yaml >/dev/null
  git commit -qam moved
  r=$RUNS
  ((n >= 1000000)) && r=2
  v=$(median "$r" -N "$KCO -q validate s/c/big.yaml")
  f=$(median "$r" -N "$KCO -q fmt --check s/c/big.yaml")
  b=$(median "$r" -N -i "$KCO -q diff --base HEAD~1 s/c/big.yaml")
  per+=("$n $v $f $b")
  cd "$WORK"
done
read -r n0 v0 f0 b0 <<<"${per[0]}"
read -r n1 v1 f1 b1 <<<"${per[1]}"
us() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.2f", s*1e6/n }'; }
for what in validate fmt base; do
  case $what in
    validate) a=$v0 b=$v1 label="validate" ;;
    fmt) a=$f0 b=$f1 label="fmt --check" ;;
    base) a=$b0 b=$b1 label="diff --base HEAD~1" ;;
  esac
  row "$label per partition, $n1 vs $n0 partitions | $(us "$b" "$n1") µs vs $(us "$a" "$n0") µs ($(fmt_s "$b") vs $(fmt_s "$a")) | ratio $(awk -v a="$a" -v b="$b" -v n0="$n0" -v n1="$n1" 'BEGIN { printf "%.2f", (b/n1)/(a/n0) }')x | \`kco $label\` on a generated file"
done

echo "== start-up" >&2
printf 'x' >/dev/null
"$KCO" --url "$FLEET" --cluster s -q snapshot conn-00001 --dir "$WORK/small" >/dev/null
V=$(median 30 -N -w 3 "$KCO --version")
S=$(median 30 -N -w 3 "$KCO -q validate $WORK/small/s/conn-00001.yaml")
row "start-up: \`kco --version\` / \`kco validate\` of one small file | $(fmt_s "$V") / $(fmt_s "$S") | - | hyperfine -N"

if [[ -n ${KCO_BENCH_TESTBED_URL:-} ]] && ((!QUICK)); then
  echo "== apply of 20 FileStream sources on $KCO_BENCH_TESTBED_URL" >&2
  "$ROOT/scripts/bench-testbed-apply.sh" "$KCO" "$KCO_BENCH_TESTBED_URL" "$WORK/tb" >>"$ROWS"
  tail -1 "$ROWS"
fi

if ((!QUICK && !FLEET_ONLY)); then
  doc=$ROOT/docs/benchmarks.md
  {
    sed '/<!-- bench:begin -->/q' "$doc"
    echo
    echo "Measured $(date -u +%Y-%m-%d) by \`scripts/bench.sh\` on $(nproc) vCPUs shared with other work; medians of $RUNS runs."
    echo
    echo "| workload | kco | reference | command |"
    echo "|---|---:|---|---|"
    cat "$ROWS"
    echo
    sed -n '/<!-- bench:end -->/,$p' "$doc"
  } >"$WORK/doc.md"
  cp "$WORK/doc.md" "$doc"
  echo "bench.sh: docs/benchmarks.md updated" >&2
fi
