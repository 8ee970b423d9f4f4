#!/bin/sh
# Apply on merge: put on cluster CLUSTER every change to its snapshot files not yet applied,
# and record in git what that did to the cluster.
#
#   apply-on-merge.sh [--push] CLUSTER
#
# Run on the branch the merges land on (your default branch), after every push to it, one run
# per cluster at a time (the CI's concurrency group or resource group; kco's own lock, shared
# through the git remote, refuses a second apply to the cluster meanwhile).
#
# What it applies: `kco apply --unapplied`, every change since the newest apply record of
# CLUSTER on the first-parent history (`Kco-Apply: CLUSTER`, from the commit its `Kco-Commit:`
# names). A nightly landing after a merge never hides it; a run that was cancelled or lost is
# caught up by the next one; a rerun after the record applies nothing. The files tell a change
# from an observation (see examples/README.md): a file kco rewrote from live (`capturedAt`
# moved: the nightly, this recipe's own records, a plain `git commit` of a snapshot) is never
# applied, whatever its commit message says. The first run, before any apply record exists,
# applies the changes since KCO_APPLY_SINCE (a revision; default: HEAD's first parent) and
# says so.
#
# First, another runner's operation on CLUSTER that did not finish (killed, its lock stale or
# force-unlocked) and whose journal is on the shared git remote is finished: `kco recover`
# puts back the states that journal records (as any apply does first when it takes the lock
# over), and the recipe says so; the dry run and the snapshot below refuse until then. One
# that cannot be finished stops the run (exit 1), nothing applied.
#
# When there is something to apply:
#   1. `kco snapshot --commit`: the cluster's offsets before the apply (an observation);
#   2. the apply, refused before any change on DATA LOSS or OFFSET RESET
#      (`--fail-on data-loss,reset`): apply_changes below, the one place it is said; its output
#      names each change applied (commit, partitions) and each commit or file left out;
#   3. `kco snapshot --commit --record apply --trailer "Kco-Commit: TIP"` (TIP: the commit the
#      run started from): the record, so that `kco log` shows what the apply did and the next
#      run starts after TIP; an empty record commit when the apply moved nothing.
# Then, with --push, `git push` to the branch (after a rebase on what others pushed meanwhile).
#
# Environment: KCO, the kco binary (default `kco`); KCO_SNAPSHOTS_DIR (default `snapshots`);
# KCO_APPLY_SINCE (first run only); KCO_BRANCH, the branch to push (default: the CI's branch,
# GITHUB_REF_NAME or CI_COMMIT_BRANCH, else the checked-out one); kco's KCO_URL / KCO_CONFIG;
# git's identity, else "kco apply <kco@localhost>".
# Exit codes: 0 applied and recorded, or nothing to apply; 1 error or refused (the changes are
# left for a human: see examples/README.md).
set -eu

KCO=${KCO:-kco}
DIR=${KCO_SNAPSHOTS_DIR:-snapshots}
PUSH=no
case ${1-} in --push) PUSH=yes; shift ;; esac
[ $# -eq 1 ] || { echo "usage: apply-on-merge.sh [--push] CLUSTER" >&2; exit 1; }
CLUSTER=$1

# kco commits with git's identity; a CI runner often has none.
GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-$(git config user.name || echo 'kco apply')}
GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-$(git config user.email || echo 'kco@localhost')}
GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}
GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
export GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

TIP=$(git rev-parse HEAD)
# Which changes: those not yet applied, or on the first run those since KCO_APPLY_SINCE.
if [ -n "$(git log --first-parent -1 --format=%H --grep="^Kco-Apply: $CLUSTER\$" --grep="^Kco-Undo: $CLUSTER\$" HEAD)" ]; then
  set -- --unapplied
elif since=$(git rev-parse -q --verify "${KCO_APPLY_SINCE:-HEAD^}^{commit}"); then
  echo "apply-on-merge: no apply record of cluster $CLUSTER yet: applying the changes since $(git log -1 --format='%h %s' "$since") (set KCO_APPLY_SINCE to start elsewhere)." >&2
  set -- --changed-since "$since"
else
  set -- --commit "$TIP"
fi

# An interrupted operation recorded on the remote is finished first. `recover` prints what it
# put back on stdout, and nothing there when there was nothing to do.
if ! recovered=$("$KCO" --cluster "$CLUSTER" recover -q); then
  echo "apply-on-merge: an interrupted operation on cluster $CLUSTER could not be finished (above): nothing applied; the changes are left for a human." >&2
  exit 1
fi
if [ -n "$recovered" ]; then
  printf '%s\n' "$recovered" >&2
  echo "apply-on-merge: finished first the interrupted operation recorded for cluster $CLUSTER (above), as an apply taking its lock over does; now applying." >&2
fi

# The one place the apply is spelled: the changes chosen above, applied to the cluster's
# files, refused before any change on DATA LOSS or OFFSET RESET.
apply_changes() {
  "$KCO" --cluster "$CLUSTER" apply "$DIR/$CLUSTER" "$@" --fail-on data-loss,reset
}

# Anything to apply? The dry run's JSON names each change's file (`changed_by`); a refusal
# (DATA LOSS, OFFSET RESET) or an error stops here, before anything is committed.
code=0
plan=$(apply_changes "$@" --dry-run -o json) || code=$?
if [ "$code" -ne 0 ]; then
  echo "apply-on-merge: nothing applied on cluster $CLUSTER (kco exit $code): the changes are left for a human." >&2
  exit 1
fi
if ! printf '%s\n' "$plan" | grep -q '"changed_by"'; then
  echo "apply-on-merge: nothing to apply on cluster $CLUSTER: no change to $DIR/$CLUSTER since the last one applied (HEAD $(git rev-parse --short HEAD))." >&2
  exit 0
fi

# The cluster before: an observation, so that the record shows the apply's real movement.
"$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR" --commit -q
apply_changes "$@" --yes
before=$(git rev-parse HEAD)
"$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR" --commit -q --record apply --trailer "Kco-Commit: $TIP"
if [ "$(git rev-parse HEAD)" = "$before" ]; then
  git commit -q --allow-empty -m "offsets of $CLUSTER after an apply of $(git rev-parse --short "$TIP")" \
    -m "Kco-Apply: $CLUSTER
Kco-Commit: $TIP"
fi

if [ "$PUSH" = yes ]; then
  branch=${KCO_BRANCH:-${GITHUB_REF_NAME:-${CI_COMMIT_BRANCH:-$(git rev-parse --abbrev-ref HEAD)}}}
  for attempt in 1 2 3; do
    git push -q origin "HEAD:$branch" && exit 0
    echo "apply-on-merge: push refused (attempt $attempt): rebasing on origin/$branch" >&2
    git pull -q --rebase origin "$branch"
  done
  echo "apply-on-merge: applied, but could not push the record: push it by hand, or the next run applies these changes again." >&2
  exit 1
fi
