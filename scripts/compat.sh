#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Compatibility matrix: for each Kafka release, start the test bed at that version, run
# the e2e suite (kco's commands and the connector kinds), stop it, and write the measured
# table to docs/compatibility.md and docs/compatibility.json (the table's source, which
# tests/e2e/compat_doc.rs checks the doc against).
#
# Usage: scripts/compat.sh [VERSION ...]     (default: the latest patch of 3.6 .. 4.4)
#
# Environment:
#   KCO_TESTBED_*         ports and state directory, as for scripts/local-connect.sh
#   KCO_E2E_THREADS       e2e tests in parallel (default 4)
#   KCO_COMPAT_DOCS       where to write compatibility.md/.json (default <repo>/docs)
# Logs: <state dir>/compat/<version>.{up,e2e}.log
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib/e2e-env.sh
source "$ROOT/scripts/lib/e2e-env.sh"
# shellcheck source=lib/compat-render.sh
source "$ROOT/scripts/lib/compat-render.sh"

# The latest patch of each line whose jars (connect-file and connect-mirror included) Maven
# resolves: 4.2.1 and 4.2.2 lack connect-file, so the 4.2 line runs as 4.2.0. 4.4.0's own
# plugin jars are not published: its worker runs with the newest that resolve (the test
# bed picks them; the page says which).
DEFAULT_VERSIONS=(3.6.2 3.7.2 3.8.1 3.9.2 4.0.2 4.1.2 4.2.0 4.3.1 4.4.0)
VERSIONS=("$@")
((${#VERSIONS[@]} > 0)) || VERSIONS=("${DEFAULT_VERSIONS[@]}")
DOCS=${KCO_COMPAT_DOCS:-$ROOT/docs}
LC=(bash "$ROOT/scripts/local-connect.sh")
e2e_env "$ROOT"
LOGS="$KCO_TESTBED_DIR/compat"
mkdir -p "$LOGS"

say() { printf 'compat: %s\n' "$*" >&2; }
die() {
  printf 'compat: error: %s\n' "$*" >&2
  exit 1
}

cleanup() { "${LC[@]}" down >/dev/null 2>&1 || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"${LC[@]}" status >/dev/null 2>&1 &&
  die "a test bed already runs in $KCO_TESTBED_DIR; stop it first (scripts/local-connect.sh down)"

say "building the e2e suite"
cargo test --test e2e --no-run >"$LOGS/build.log" 2>&1 || die "cargo could not build the e2e suite (see $LOGS/build.log)"

# Results: RESULT[<version>:<feature>]=status|note
declare -A RESULT SECONDS_OF PLUGINS
for v in "${VERSIONS[@]}"; do
  start=$SECONDS
  up_log="$LOGS/$v.up.log" e2e_log="$LOGS/$v.e2e.log"
  rm -f "$e2e_log"
  say "Kafka $v: starting the test bed (log: $up_log)"
  if ! KAFKA_VERSION=$v "${LC[@]}" up >"$up_log" 2>&1; then
    why=$(startup_failure "$up_log" "$v")
    say "Kafka $v: the test bed did not start: $why"
    for f in "${FEATURES[@]}"; do RESULT[$v:$f]="unavailable|$why"; done
    SECONDS_OF[$v]=$((SECONDS - start))
    "${LC[@]}" down >/dev/null 2>&1 || true
    continue
  fi
  if [[ -f $KCO_TESTBED_DIR/classpath/$v.plugins ]]; then
    PLUGINS[$v]=$(<"$KCO_TESTBED_DIR/classpath/$v.plugins")
    say "Kafka $v: with the connect-file and connect-mirror jars of ${PLUGINS[$v]}"
  fi
  say "Kafka $v: running the e2e suite (log: $e2e_log)"
  cargo test --test e2e -- --test-threads "${KCO_E2E_THREADS:-4}" >"$e2e_log" 2>&1 || true
  "${LC[@]}" down >/dev/null 2>&1 || true
  grade_version "$v" "$e2e_log"
  SECONDS_OF[$v]=$((SECONDS - start))
  say "Kafka $v: done in ${SECONDS_OF[$v]} s"
done

write_json "$DOCS/compatibility.json" "$*"
write_markdown "$DOCS/compatibility.md" "$*"
say "wrote $DOCS/compatibility.md and $DOCS/compatibility.json"
