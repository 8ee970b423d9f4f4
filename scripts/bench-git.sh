#!/usr/bin/env bash
# Generates a repository of 1,000 connectors and 1,000 nightly commits and times kco log,
# kco log --stalled and kco apply --at / --changed-since planning on it (docs/benchmarks.md).
# Extra arguments go to the bench: --connectors N --commits C.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --bench git_history -- "$@"
