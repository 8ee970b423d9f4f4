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
# names), or since the shared git remote's mark of what was applied (`refs/kco/applied/CLUSTER`,
# moved by every apply of the changes up to HEAD under the cluster's lock) when that is newer.
# A nightly landing after a merge never hides it; a run that was cancelled or lost is caught up
# by the next one; a rerun after the record applies nothing, and so does a rerun on an older
# checkout than another runner applied (a CI "re-run job" on the original checkout): the mark
# is read under the lock, before anything is planned, and such a run says `Applied already`,
# records nothing and exits 0. The files tell a change
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
# Which changes: those not yet applied (a record on this checkout's history, or the shared
# remote's mark of what another run applied), or on the first run those since KCO_APPLY_SINCE.
if [ -n "$(git log --first-parent -1 --format=%H --grep="^Kco-Apply: $CLUSTER\$" --grep="^Kco-Undo: $CLUSTER\$" HEAD)" ] ||
  "$KCO" --cluster "$CLUSTER" lock status -o json 2>/dev/null | grep -q '"applied": *\['; then
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
  if "$KCO" --cluster "$CLUSTER" lock status -o json 2>/dev/null | grep -q '"holder"'; then
    echo "apply-on-merge: the lock of cluster $CLUSTER is held by another run (above): nothing applied; this job applies the changes when run again once that run ends." >&2
  else
    echo "apply-on-merge: an interrupted operation on cluster $CLUSTER could not be finished (above): nothing applied; the changes are left for a human." >&2
  fi
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
  # The plan as text for the job log (the JSON above went to a variable).
  apply_changes "$@" --dry-run >&2 || true
  echo "apply-on-merge: nothing applied on cluster $CLUSTER (kco exit $code; the plan and why above): the changes are left for a human." >&2
  exit 1
fi
if printf '%s\n' "$plan" | grep -q '"use": *"covers_head"'; then
  apply_changes "$@" --dry-run | grep '^ *Applied already: ' >&2 || true
  echo "apply-on-merge: nothing to apply on cluster $CLUSTER: another run applied the changes up to this checkout (HEAD $(git rev-parse --short HEAD)) already; no record written." >&2
  exit 0
fi
if ! printf '%s\n' "$plan" | grep -q '"changed_by"'; then
  echo "apply-on-merge: nothing to apply on cluster $CLUSTER: no change to $DIR/$CLUSTER since the last one applied (HEAD $(git rev-parse --short HEAD))." >&2
  exit 0
fi

# The cluster before: an observation, so that the record shows the apply's real movement.
"$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR" --commit -q
code=0
applied=$(apply_changes "$@" --yes) || code=$?
printf '%s\n' "$applied"
[ "$code" -eq 0 ] || exit "$code"
if printf '%s\n' "$applied" | grep -q '^Applied already: '; then
  echo "apply-on-merge: nothing applied on cluster $CLUSTER: another run applied these changes while this one waited for the lock; no record written." >&2
  exit 0
fi
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
