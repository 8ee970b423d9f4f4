#!/bin/sh
# kco's metrics pushed to a Prometheus Pushgateway, for a job that no node-exporter watches
# (a CI runner). `-o openmetrics` prints the metrics instead of the report; kco's exit code is
# kept (diff: 2 on drift), after the push.
#
#   PUSHGATEWAY=http://pushgateway:9091 CLUSTER=prod pushgateway.sh
#
# POST (curl --data-binary) replaces only the metrics it sends: a failed run sends no
# kco_last_success_timestamp_seconds, so the one an earlier run pushed stays. Add kco's
# --metrics-file to keep it in a file as well.
set -eu
: "${PUSHGATEWAY:?the Pushgateway URL}" "${CLUSTER:?the kco.yaml cluster}"
KCO=${KCO:-kco}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
code=0
"$KCO" --cluster "$CLUSTER" diff -o openmetrics >"$out" || code=$?
curl -fsS --data-binary @"$out" "$PUSHGATEWAY/metrics/job/kco_diff/cluster/$CLUSTER"
exit "$code"
