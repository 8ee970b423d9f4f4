#!/bin/sh
# Review of a pull request (merge request) that changes snapshot files.
#
#   pr-review.sh BASE BODY_FILE
#
# Writes `kco diff --base BASE --output markdown` and a verdict to BODY_FILE, for the CI job
# to post as ONE comment it updates on every run (the body's first line is the marker
# `<!-- kco-offsets-review -->` the job finds it by). With the cluster reachable (KCO_URL or
# kco.yaml), kco labels each changed partition by what applying the change would do to the
# live offsets, and says so (a connector the cluster lacks: against what a deleted connector of
# its name left, read through kco.yaml's `kafka:`, or, where kco cannot read that, against
# nothing, which its note says); without it, its labels compare the files only, and it says that.
# The change is the pull request's own: the working tree against the merge base of HEAD and
# BASE, as the forge shows it (the nightlies that landed on BASE since the branch forked are
# not the PR's); the checkout needs the history down to that merge base (fetch-depth: 0).
# Fails when the change would reprocess records, lose data or reset an offset (REPROCESSING,
# DATA LOSS, OFFSET RESET: the apply's own guard refuses the last two), unless the pull request
# carries the allowing label.
#
# Environment: KCO, the kco binary (default `kco` on PATH); PR_LABELS, the pull request's
# labels, comma-separated (GitLab's CI_MERGE_REQUEST_LABELS is used when it is unset);
# KCO_ALLOW_LABEL, the label that allows a risky change (default `offsets-risk-accepted`);
# KCO_BLOCKING_RISKS, the risk codes that fail the review (default
# `reprocessing data_loss offset_reset`, see docs/diff.md).
# Exit codes: 0 the change may be merged, 1 it may not (or kco failed).
set -eu

KCO=${KCO:-kco}
LABELS=${PR_LABELS-${CI_MERGE_REQUEST_LABELS-}}
ALLOW=${KCO_ALLOW_LABEL:-offsets-risk-accepted}
BLOCKING=${KCO_BLOCKING_RISKS:-reprocessing data_loss offset_reset}
MARKER='<!-- kco-offsets-review -->'
[ $# -eq 2 ] || { echo "usage: pr-review.sh BASE BODY_FILE" >&2; exit 1; }
BASE=$1
BODY=$2

code=0
printf '%s\n' "$MARKER" >"$BODY"
"$KCO" diff --base "$BASE" --output markdown >>"$BODY" || code=$?
if [ "$code" -ne 0 ] && [ "$code" -ne 2 ]; then
  printf '\n**kco diff failed** (exit %s): see the job log.\n' "$code" >>"$BODY"
  exit 1
fi

# The decision reads the JSON report (its risk codes are a documented contract), not the text.
found=  # the blocking labels found, e.g. "REPROCESSING, DATA LOSS"
if [ "$code" -eq 2 ]; then
  report=$("$KCO" diff --base "$BASE" --output json) || [ $? -eq 2 ]
  for risk in $BLOCKING; do
    if printf '%s\n' "$report" | grep -Eq "\"code\": *\"$risk\""; then
      found="${found:+$found, }$(echo "$risk" | tr 'a-z_' 'A-Z ')"
    fi
  done
fi

if [ -z "$found" ]; then
  printf '\n**Verdict:** no blocking risk (%s).\n' "$(echo "$BLOCKING" | sed 's/ /, /g')" >>"$BODY"
  exit 0
fi
if printf ',%s,' "$LABELS" | tr -d ' ' | grep -Fq ",$ALLOW,"; then
  printf '\n**Verdict:** %s accepted by the label `%s`.\n' "$found" "$ALLOW" >>"$BODY"
  exit 0
fi
printf '\n**Verdict: blocked.** This change means %s. Add the label `%s` to accept it.\n' \
  "$found" "$ALLOW" >>"$BODY"
echo "pr-review: blocked: $found (label \`$ALLOW\` accepts it)" >&2
exit 1
