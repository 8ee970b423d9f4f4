#!/bin/sh
# Apply on merge: put on cluster CLUSTER exactly what the merged changes to its snapshot files
# said, and record in git what that did to the cluster.
#
#   apply-on-merge.sh [--push] CLUSTER
#
# Run on the branch the merges land on (main), after every push to it, one run per cluster at a
# time (the CI's concurrency group or resource group; kco's own lock is per machine unless the
# shared lock is configured). What it applies: every change (a commit without a kco trailer: a
# merge, a direct push) on the first-parent history after the last change applied to CLUSTER
# (the `Kco-Commit:` of its newest `Kco-Apply: CLUSTER` record), oldest first; only HEAD the
# first time. A run started by the nightly's push or by this recipe's own push finds nothing to
# do: those commits are records (`Kco-Snapshot`, `Kco-Apply`, `Kco-Undo`), never applied. A run
# that was cancelled or lost is caught up by the next one.
#
# For each change C, in order:
#   1. `kco snapshot --commit`: the cluster's offsets before the apply (an observation);
#   2. the apply of what C brought, from its first parent to it, refused on DATA LOSS or
#      OFFSET RESET (`--fail-on data-loss,reset`): apply_change below, the one place it is said;
#   3. `kco snapshot --commit --record apply --trailer "Kco-Commit: C"`: the record, so that
#      `kco log` shows what the apply did to the cluster; an empty record commit when the
#      apply moved nothing (the marker that C was applied).
# Then, with --push, `git push` (after a rebase on what others pushed meanwhile).
#
# Environment: KCO, the kco binary (default `kco`); KCO_SNAPSHOTS_DIR (default `snapshots`);
# kco's KCO_URL / KCO_CONFIG; git's identity, else "kco apply <kco@localhost>".
# Exit codes: 0 applied and recorded, or nothing to apply; 1 error or refused (the change and
# everything after it are left for a human: see examples/README.md).
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

# The one place the apply is spelled: the change commit $1 brought (its first parent to it),
# applied to the cluster's files, refused before any change on DATA LOSS or OFFSET RESET.
apply_change() {
  "$KCO" --cluster "$CLUSTER" apply "$DIR/$CLUSTER" --commit "$1" --fail-on data-loss,reset --yes
}

is_record() {
  [ -n "$(git log -1 --format='%(trailers:key=Kco-Snapshot,key=Kco-Apply,key=Kco-Undo,valueonly)' "$1")" ]
}

# The last change applied to this cluster, from its newest apply record.
last=
record=$(git log --first-parent -1 --format=%H --grep="^Kco-Apply: $CLUSTER\$" HEAD)
if [ -n "$record" ]; then
  last=$(git log -1 --format='%(trailers:key=Kco-Commit,valueonly)' "$record" | head -n1)
fi
if [ -n "$last" ] && git merge-base --is-ancestor "$last" HEAD 2>/dev/null; then
  todo=$(git rev-list --first-parent --reverse "$last..HEAD")
else
  todo=$(git rev-parse HEAD)
fi

changes=
for c in $todo; do
  is_record "$c" && continue
  # A change that did not touch this cluster's files has nothing to apply here.
  if git rev-parse -q --verify "$c^" >/dev/null; then
    git diff --quiet "$c^" "$c" -- "$DIR/$CLUSTER" && continue
  fi
  changes="$changes $c"
done
if [ -z "$changes" ]; then
  echo "apply-on-merge: nothing to apply on cluster $CLUSTER (HEAD $(git rev-parse --short HEAD) is a record, or no change touched $DIR/$CLUSTER)." >&2
  exit 0
fi

# The cluster before: an observation, so that the record shows the apply's real movement.
"$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR" --commit -q
for c in $changes; do
  echo "apply-on-merge: applying $(git log -1 --format='%h %s' "$c") to cluster $CLUSTER" >&2
  apply_change "$c"
  before=$(git rev-parse HEAD)
  "$KCO" --cluster "$CLUSTER" snapshot --dir "$DIR" --commit -q --record apply --trailer "Kco-Commit: $c"
  if [ "$(git rev-parse HEAD)" = "$before" ]; then
    git commit -q --allow-empty -m "offsets of $CLUSTER after an apply of $(git rev-parse --short "$c")" \
      -m "Kco-Apply: $CLUSTER
Kco-Commit: $c"
  fi
done

if [ "$PUSH" = yes ]; then
  branch=$(git rev-parse --abbrev-ref HEAD)
  for attempt in 1 2 3; do
    git push -q origin "HEAD:$branch" && exit 0
    echo "apply-on-merge: push refused (attempt $attempt): rebasing on origin/$branch" >&2
    git pull -q --rebase origin "$branch"
  done
  echo "apply-on-merge: applied, but could not push the record: push it by hand, or the next run applies these changes again." >&2
  exit 1
fi
