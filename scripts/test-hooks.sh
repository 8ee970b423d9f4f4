#!/usr/bin/env bash
# Tests .pre-commit-hooks.yaml with the real `pre-commit` tool, offline: the hooks file as it
# is in this checkout, committed to a scratch hooks repository; a scratch project repository
# with kco snapshot files; `pre-commit try-repo`; the kco binary of target/debug on PATH. Installs pre-commit with pip when
# it is missing. Run by scripts/test.sh; needs `cargo build` first.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KCO_BIN="$ROOT/target/debug/kco"
[[ -x $KCO_BIN ]] || { echo "test-hooks.sh: build kco first (cargo build)" >&2; exit 1; }
if ! command -v pre-commit >/dev/null 2>&1; then
  python3 -m pip install --quiet --user pre-commit >&2
  PATH="$(python3 -m site --user-base)/bin:$PATH"
  export PATH
fi
# HOME is replaced below, and Python finds packages installed with --user under HOME: keep it
# looking where pip put them.
PYTHONUSERBASE=${PYTHONUSERBASE:-$(python3 -m site --user-base)}
export PYTHONUSERBASE

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PATH="$(dirname "$KCO_BIN"):$PATH"
export PATH HOME="$WORK/home" PRE_COMMIT_HOME="$WORK/cache"
mkdir -p "$HOME"
git config --global user.email hooks@kco.test
git config --global user.name "kco hooks test"
git config --global init.defaultBranch main

HOOKS="$WORK/hooks"
mkdir -p "$HOOKS" && cp "$ROOT/.pre-commit-hooks.yaml" "$HOOKS/"
git -C "$HOOKS" init -q && git -C "$HOOKS" add -A && git -C "$HOOKS" commit -qm hooks

REPO="$WORK/repo"
mkdir -p "$REPO" && cd "$REPO" && git init -q
echo '{"offsets":[{"partition":{"kafka_topic":"orders","kafka_partition":0},"offset":{"kafka_offset":42}}]}' \
  | kco import -q --from json - --name orders --cluster prod >/dev/null
echo 'not: a snapshot' > other.yaml
git add -A

fail() { echo "test-hooks.sh: FAIL: $*" >&2; exit 1; }
hook() { pre-commit try-repo "$HOOKS" "$1" >"$WORK/out" 2>&1; }

hook kco-validate || { cat "$WORK/out" >&2; fail "kco-validate rejected a valid file"; }
hook kco-fmt-check || { cat "$WORK/out" >&2; fail "kco-fmt-check rejected a canonical file"; }
grep -q "other.yaml" "$WORK/out" && fail "a yaml file outside snapshots/ was checked"

# A hand edit without re-sealing: validate names file and line, fmt --check fails too.
sed -i 's/kafka_offset: 42/kafka_offset: 43/' snapshots/prod/orders.yaml
git add -A
if hook kco-validate; then fail "kco-validate passed an edited file"; fi
grep -q "snapshots/prod/orders.yaml:[0-9]*: checksum mismatch" "$WORK/out" \
  || { cat "$WORK/out" >&2; fail "no file:line in kco-validate's output"; }
if hook kco-fmt-check; then fail "kco-fmt-check passed an unsealed file"; fi

# `kco fmt` accepts the edit; both hooks pass again.
kco fmt -q snapshots/prod/orders.yaml >/dev/null
git add -A
hook kco-validate || { cat "$WORK/out" >&2; fail "kco-validate after kco fmt"; }
hook kco-fmt-check || { cat "$WORK/out" >&2; fail "kco-fmt-check after kco fmt"; }
echo "test-hooks.sh: pre-commit hooks OK" >&2
