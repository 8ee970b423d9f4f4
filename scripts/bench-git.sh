#!/usr/bin/env bash
# Generates a repository of 1,000 connectors and 1,000 nightly commits and times kco log,
# kco log --stalled and kco apply --at / --changed-since planning on it (docs/benchmarks.md).
# Extra arguments go to the bench: --connectors N --commits C.
#
#   scripts/bench-git.sh --quick   a smoke run (scripts/test.sh): 20 connectors x 30 commits,
#                                  the debug build the tests made (with the fake); no time is
#                                  asserted, only that every command exits as documented
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == --quick ]]; then
  shift
  exec cargo bench --profile dev --features fake --bench git_history -- --connectors 20 --commits 30 "$@"
fi
exec cargo bench --bench git_history -- "$@"
