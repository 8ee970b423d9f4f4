#!/bin/sh
# Nightly backup of a cluster's connector offsets into the git repository it runs in.
#
#   nightly-snapshot.sh [--push] CLUSTER
#
# 1. Drift check: `kco diff --fail-on drift,failed` of the files already committed for CLUSTER.
#    A connector or task FAILED fails it too: its offsets may be in sync while it consumes
#    nothing, and tonight's files would back up a broken pipeline as good.
#    A running connector's normal progress passes, and so does one its owner paused or
#    stopped (recorded tonight); offsets behind their file, offsets changed while stopped, a
#    connector gone from the cluster, a stop a kco operation may have left behind (it holds
#    the cluster's lock) fail: exit 2, nothing is committed, so
#    the last good offsets stay at the tip of the branch for `kco apply`. The hint names a
#    command that works then: `kco recover` while a kco operation holds the cluster's lock or
#    left its journal on the remote (a dry run and a snapshot refuse until it is finished).
# 2. `kco snapshot --commit` (unchanged offsets leave files byte-identical; new connectors get
#    a file): a commit of exactly the cluster's files, `offsets of CLUSTER` with the trailer
#    `Kco-Snapshot: CLUSTER`, only when one changed; with --push, `git push` after it. The
#    trailer marks an observation: apply-on-merge.sh, started by this push, applies nothing.
#
# Environment: KCO, the kco binary (default `kco` on PATH); KCO_SNAPSHOTS_DIR, the snapshots
# directory (default `snapshots`); KCO_WITH_CONFIG=1, capture each connector's config too
# (`kco snapshot --with-config`, secrets left out as placeholders), which a rename or a
# recreate (`kco apply --as NEW --create`, `--create`) needs; KCO_BRANCH, the branch --push pushes (default: the CI's,
# GITHUB_REF_NAME or CI_COMMIT_BRANCH, else the checked-out one); kco's own KCO_URL and
# KCO_CONFIG (else kco.yaml); git's identity, else "kco nightly <kco@localhost>";
# KCO_METRICS_DIR, node-exporter's textfile directory: the snapshot writes its metrics there
# (kco_snapshot_CLUSTER.prom, for KcoBackupTooOld and KcoJobMissing; docs/metrics.md).
# Exit codes: 0 committed or nothing moved, 1 error, 2 drift (nothing committed).
set -eu

# kco commits with git's identity; a scheduled runner often has none.
GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-$(git config user.name || echo 'kco nightly')}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-$(git config user.email || echo 'kco@localhost')}
GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

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
  "$KCO" --cluster "$CLUSTER" diff --dir "$DIR" --fail-on drift,failed "$@" || code=$?
  if [ "$code" -eq 2 ]; then
    echo "nightly-snapshot: cluster $CLUSTER drifted from the committed files: nothing committed." >&2
    # A kco operation that holds the cluster's lock, or left its journal on the git remote,
    # may have left connectors stopped: until it is finished, a dry run and a snapshot refuse,
    # so the hint is the command that works now.
    if "$KCO" --cluster "$CLUSTER" lock status -o json 2>/dev/null | grep -q '"kind"' ||
      [ -n "$(git ls-remote --refs origin "refs/kco/journals/$CLUSTER" 2>/dev/null)" ]; then
      echo "  A kco operation on cluster $CLUSTER has not finished (its lock or journal is held: \`kco --cluster $CLUSTER lock status\`), and may have left connectors stopped. If it was killed, \`kco --cluster $CLUSTER recover\` puts back the states it recorded (if it is still running, wait for it); then run this again." >&2
    else
      echo "  See what restoring the files would do first: \`kco --cluster $CLUSTER apply $DIR/$CLUSTER --dry-run\` (it may rewind running connectors); restore through a reviewed pull request, or accept the cluster's offsets with \`kco --cluster $CLUSTER snapshot --commit\`." >&2
    fi
    exit 2
  fi
  [ "$code" -eq 0 ] || exit "$code"
fi

# The snapshot, committed by kco: exactly the cluster's files, with the trailer
# `Kco-Snapshot: CLUSTER` that marks an observation (the apply-on-merge recipe never applies it).
before=$(git rev-parse -q --verify HEAD || true)
set --
[ "${KCO_WITH_CONFIG:-0}" = 1 ] && set -- --with-config
[ -n "${KCO_METRICS_DIR:-}" ] && set -- "$@" --metrics-file "$KCO_METRICS_DIR/kco_snapshot_$CLUSTER.prom"
"$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR" --commit "$@"
if [ "$(git rev-parse -q --verify HEAD || true)" = "$before" ]; then
  echo "nightly-snapshot: nothing moved on cluster $CLUSTER: no commit." >&2
  exit 0
fi
changed=$(git diff-tree --root --no-commit-id --name-only -r HEAD | wc -l | tr -d ' ')
files="$changed files"
[ "$changed" -eq 1 ] && files="1 file"
echo "nightly-snapshot: committed $files of cluster $CLUSTER." >&2
if [ "$PUSH" = yes ]; then
  # The CI's branch (a scheduled job may run on a detached HEAD), else the checked-out one.
  branch=${KCO_BRANCH:-${GITHUB_REF_NAME:-${CI_COMMIT_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}}}
  if [ "$branch" = HEAD ]; then
    echo "nightly-snapshot: HEAD is detached and no branch is named (KCO_BRANCH): committed, not pushed." >&2
    exit 1
  fi
  git push -q origin "HEAD:refs/heads/$branch"
fi
