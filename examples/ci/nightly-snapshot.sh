#!/bin/sh
# Nightly backup of a cluster's connector offsets into the git repository it runs in.
#
#   nightly-snapshot.sh [--push] CLUSTER
#
# 1. Drift check: `kco diff --fail-on drift` of the files already committed for CLUSTER.
#    A running connector's normal progress passes; offsets behind their file, offsets changed
#    while stopped, a connector gone from the cluster fail: exit 2, nothing is committed, so
#    the last good offsets stay at the tip of the branch for `kco apply`.
# 2. `kco snapshot` (unchanged offsets leave files byte-identical; new connectors get a file).
# 3. A commit only when a file under <dir>/CLUSTER changed (with the JSON Schema kco keeps at
#    <dir>/connector-offsets-v1.json, where the files' `$schema` line points); with --push,
#    `git push` after it.
#
# Environment: KCO, the kco binary (default `kco` on PATH); KCO_SNAPSHOTS_DIR, the snapshots
# directory (default `snapshots`); kco's own KCO_URL and KCO_CONFIG (else kco.yaml); git's
# identity, else "kco nightly <kco@localhost>".
# Exit codes: 0 committed or nothing moved, 1 error, 2 drift (nothing committed).
set -eu

KCO=${KCO:-kco}
DIR=${KCO_SNAPSHOTS_DIR:-snapshots}
PUSH=no
case ${1-} in --push) PUSH=yes; shift ;; esac
[ $# -eq 1 ] || { echo "usage: nightly-snapshot.sh [--push] CLUSTER" >&2; exit 1; }
CLUSTER=$1

# The files committed so far, named one by one: kco then checks them, and a connector that
# has no file yet (new since last night) is not a difference but tonight's new file.
set --
for f in "$DIR/$CLUSTER"/*.yaml; do
  [ -e "$f" ] && set -- "$@" "$f"
done
if [ $# -gt 0 ]; then
  code=0
  "$KCO" --cluster "$CLUSTER" diff --dir "$DIR" --fail-on drift "$@" || code=$?
  if [ "$code" -eq 2 ]; then
    echo "nightly-snapshot: cluster $CLUSTER drifted from the committed files: nothing committed." >&2
    echo "  Restore them with \`kco apply $DIR/$CLUSTER --yes\`, or accept the cluster's offsets with \`kco snapshot\` and a commit." >&2
    exit 2
  fi
  [ "$code" -eq 0 ] || exit "$code"
fi

"$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR"

if [ -z "$(git status --porcelain -- "$DIR/$CLUSTER")" ]; then
  echo "nightly-snapshot: nothing moved on cluster $CLUSTER: no commit." >&2
  exit 0
fi
set -- "$DIR/$CLUSTER"
[ -e "$DIR/connector-offsets-v1.json" ] && set -- "$@" "$DIR/connector-offsets-v1.json"
git add -A -- "$@"
changed=$(git diff --cached --name-only -- "$@" | wc -l | tr -d ' ')
files="$changed files"
[ "$changed" -eq 1 ] && files="1 file"
git -c user.name="$(git config user.name || echo 'kco nightly')" \
    -c user.email="$(git config user.email || echo 'kco@localhost')" \
    commit -q -m "offsets of $CLUSTER: $files changed" -- "$@"
echo "nightly-snapshot: committed $files of cluster $CLUSTER." >&2
if [ "$PUSH" = yes ]; then
  git push -q origin HEAD
fi
