#!/usr/bin/env bash
# Two builds of kco side by side, in interleaved pairs (A then B, N times, so that a busy
# machine weighs on both alike): start-up (`--version`) and three CPU-bound workloads on a
# generated sink file (validate, fmt --check, diff --base HEAD~1), plus each binary's size.
# With --image IMAGE, also `podman run IMAGE --version` against B's `--version`.
# Prints a Markdown table: medians, and the median of the per-pair ratios B/A.
#
# Usage: scripts/bench-release.sh A_BINARY B_BINARY [--runs N] [--partitions N] [--image IMAGE]
# Used for the release profile's before/after in docs/benchmarks.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 2 ]] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
A=$(realpath "$1") B=$(realpath "$2")
shift 2
RUNS=15 PARTITIONS=200000 IMAGE=
while (($#)); do
  case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --partitions) PARTITIONS=$2; shift 2 ;;
    --image) IMAGE=$2; shift 2 ;;
    *) echo "bench-release.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
git init -q . && git config user.email b@b && git config user.name b
mkdir -p s/c
gen() { # canonical sink file of $1 partitions, offsets shifted by $2, unsealed
  awk -v n="$1" -v s="$2" 'BEGIN {
    print "apiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: big\n  cluster: c\n  type: sink\noffsets:"
    for (i = 0; i < n; i++) {
      printf "- partition:\n    kafka_partition: %d\n    kafka_topic: t-%06d\n  offset:\n    kafka_offset: %d\n", i % 100, int(i / 100), 1000000 + i + s
    }
    print "checksum: sha256:0000000000000000000000000000000000000000000000000000000000000000"
  }'
}
gen "$PARTITIONS" 0 >s/c/big.yaml && "$B" -q fmt s/c/big.yaml >/dev/null
git add -A && git commit -qm base
gen "$PARTITIONS" 5 >s/c/big.yaml && "$B" -q fmt s/c/big.yaml >/dev/null
git commit -qam moved

# Seconds one run of "$@" takes (wall clock); its exit code 0 or 2 is fine.
seconds() {
  local t0=$EPOCHREALTIME rc=0
  "$@" >/dev/null 2>&1 || rc=$?
  ((rc == 0 || rc == 2)) || { echo "bench-release.sh: $* exited $rc" >&2; exit 1; }
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f\n", b - a }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); if (NR % 2) print v[m]; else print (v[m] + v[m + 1]) / 2 }'; }
show() { awk -v s="$1" 'BEGIN { if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }

# pair LABEL ARGS...: A and B alternately with ARGS, RUNS pairs after one warm-up each.
pair() {
  local label=$1 i a b
  shift
  local as=() bs=() rs=()
  seconds "$A" "$@" >/dev/null
  seconds "$B" "$@" >/dev/null
  for ((i = 0; i < RUNS; i++)); do
    a=$(seconds "$A" "$@")
    b=$(seconds "$B" "$@")
    as+=("$a") bs+=("$b") rs+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f", b / a }')")
  done
  local ma mb mr
  ma=$(printf '%s\n' "${as[@]}" | median)
  mb=$(printf '%s\n' "${bs[@]}" | median)
  mr=$(printf '%s\n' "${rs[@]}" | median)
  printf '| %s | %s | %s | %.2fx |\n' "$label" "$(show "$ma")" "$(show "$mb")" "$mr"
}

echo "| workload ($RUNS interleaved pairs) | A | B | B/A (median of pairs) |"
echo "|---|---:|---:|---:|"
printf '| size of the binary | %s bytes | %s bytes | %.2fx |\n' "$(stat -c %s "$A")" "$(stat -c %s "$B")" \
  "$(awk -v a="$(stat -c %s "$A")" -v b="$(stat -c %s "$B")" 'BEGIN { print b / a }')"
pair "\`kco --version\`" --version
pair "\`kco validate\`, 1 sink x $PARTITIONS" -q validate s/c/big.yaml
pair "\`kco fmt --check\`, 1 sink x $PARTITIONS" -q fmt --check s/c/big.yaml
pair "\`kco diff --base HEAD~1\`, 1 sink x $PARTITIONS" -q diff --base HEAD~1 s/c/big.yaml

if [[ -n $IMAGE ]]; then
  # shellcheck source=lib/podman.sh
  source "$ROOT/scripts/lib/podman.sh"
  podman_cmd
  # A: podman run of the image, B: the binary itself.
  podman_version() { "${PODMAN[@]}" run --rm "${PODMAN_ULIMITS[@]}" "$IMAGE" --version; }
  as=() bs=()
  podman_version >/dev/null
  for ((i = 0; i < RUNS; i++)); do
    as+=("$(seconds podman_version)")
    bs+=("$(seconds "$B" --version)")
  done
  ma=$(printf '%s\n' "${as[@]}" | median)
  mb=$(printf '%s\n' "${bs[@]}" | median)
  printf '| `--version`: `podman run` of %s (A) vs the binary (B) | %s | %s | - |\n' "$IMAGE" "$(show "$ma")" "$(show "$mb")"
fi
