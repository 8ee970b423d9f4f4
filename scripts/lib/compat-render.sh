# Sourced by scripts/compat.sh: which e2e test proves which feature, grading one
# version's test log, and writing docs/compatibility.{json,md}.
# tests/e2e/compat_doc.rs renders cells the same way (keep the two in step).
# shellcheck shell=bash

FEATURES=(snapshot diff apply create reset orphaned rest standalone mirror debezium group wide)
declare -A LABEL=(
  [snapshot]="snapshot" [diff]="diff" [apply]="apply" [create]="apply --create (STOPPED)"
  [reset]="reset" [orphaned]="offsets of deleted connectors" [rest]="offsets REST API"
  [standalone]="standalone worker"
  [mirror]="MirrorMaker 2 source" [debezium]="Debezium PostgreSQL"
  [group]="sink, group.id override" [wide]="sink, 100 partitions"
)

# The feature an e2e test belongs to; fails for a test no feature claims, so that the
# table always covers the whole suite.
feature_of() {
  case $1 in
    snapshot::*) echo snapshot ;;
    diff::*) echo diff ;;
    apply::move_a_source_to_a_new_name_on_another_cluster | apply::a_set_of_connectors_is_recovered_onto_an_empty_cluster) echo create ;;
    apply::* | accidents::* | history::* | history_delta::* | lock::* | month::* | week::* | remotes::*) echo apply ;;
    queued_stop::* | target_cluster::*) echo apply ;;
    reset::*) echo reset ;;
    orphaned::* | wrong_topics::a_source_of_another_cluster_keeping_its_offsets_in_this_topic_is_no_leftover) echo orphaned ;;
    testbed::* | testbed_sink::* | conformance::* | init_doctor::*) echo rest ;;
    behaviours::kafka_connect_over_rest_behaves) echo apply ;;
    standalone::*) echo standalone ;;
    kinds::mirror::*) echo mirror ;;
    kinds::debezium::*) echo debezium ;;
    kinds::sinks::sink_with_overridden_group_id*) echo group ;;
    kinds::sinks::sink_over_100_partitions*) echo wide ;;
    recipes::* | kinds::shape_classes::* | kinds::debezium_shapes::*) echo snapshot ;;
    crash::* | tasks::*) echo apply ;;
    # They need beds compat.sh does not start (scripts/test.sh runs them), or the image.
    secure::* | gateway::* | dr::* | dr_runbook::* | image::* | through_kafka::* | msk_mode::* | msk_iam::* | msk_connect::*) echo none ;;
    behaviours::connect_3_4_with_rest_and_offsets_through_kafka_behaves | behaviours::connect_read_from_its_topics_behaves | behaviours::connect_3_4_deleted_and_created_again_by_kco_behaves | behaviours::amazon_msk_connect_behaves) echo none ;;
    compat_doc::*) echo none ;;
    wrong_topics::*) echo none ;;
    metrics::*) echo none ;;
    *) return 1 ;;
  esac
}

# Why `local-connect.sh up` failed, in one line (the jars Maven could not find, if so).
startup_failure() {
  local log=$1 v=${2:-} missing why
  # Maven: "The following artifacts could not be resolved: g:a:jar:v (absent), ...: <why>"
  # (the list ends at the first colon followed by a space).
  missing=$(sed 's/\x1b\[[0-9;]*m//g' "$KCO_TESTBED_DIR"/classpath/maven-"$v".log 2>/dev/null |
    sed -n 's/.*could not be resolved: //p' | head -n 1 | sed 's/: .*//; s/ (absent)//g' || true)
  if [[ -n $missing ]]; then
    echo "its jars are not in the Maven repository: $missing"
    return
  fi
  why=$(grep -m 1 'local-connect: error:' "$log" | sed 's/^local-connect: error: //; s/ (full output: [^)]*)//')
  echo "${why:-the test bed did not start (see compat/$(basename "$log"))}" | tr '|' '/'
}

# Fills RESULT[<version>:<feature>] from one version's `cargo test` output.
grade_version() {
  local v=$1 log=$2 name outcome f
  declare -A total=() failed=()
  while read -r name outcome; do
    f=$(feature_of "$name") || die "no feature claims the e2e test '$name'; add it to feature_of in scripts/lib/compat-render.sh"
    [[ $f == none ]] && continue
    total[$f]=$((${total[$f]:-0} + 1))
    if [[ $outcome != ok ]]; then failed[$f]="${failed[$f]:+${failed[$f]}, }${name##*::}"; fi
  done < <(sed -n 's/^test \([a-z0-9_:]*\) \.\.\. \(ok\|FAILED\|ignored\)$/\1 \2/p' "$log")
  local major=${v%%.*} minor=${v#*.}
  minor=${minor%%.*}
  for f in "${FEATURES[@]}"; do
    if ((${total[$f]:-0} == 0)); then
      RESULT[$v:$f]="failed|no test ran (see compat/$v.e2e.log)"
    elif [[ -n ${failed[$f]:-} ]]; then
      RESULT[$v:$f]="failed|${failed[$f]} (see compat/$v.e2e.log)"
    elif [[ $f == create ]] && ((major == 3 && minor < 7)); then
      RESULT[$v:$f]="refused|kco refuses: STOPPED creation needs 3.7 (KIP-980); refusal asserted"
    else
      RESULT[$v:$f]="ok|"
    fi
  done
}

json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

write_json() {
  local out=$1 args=$2 v f i=0 j
  {
    printf '{\n  "command": %s,\n' "$(json_str "scripts/compat.sh${args:+ $args}")"
    printf '  "generated_at": "%s",\n' "$(date -u +%F)"
    printf '  "features": [\n'
    for f in "${FEATURES[@]}"; do
      printf '    {"key": %s, "label": %s}%s\n' "$(json_str "$f")" "$(json_str "${LABEL[$f]}")" \
        "$([[ $f == "${FEATURES[-1]}" ]] || echo ,)"
    done
    printf '  ],\n  "versions": [\n'
    for v in "${VERSIONS[@]}"; do
      i=$((i + 1))
      printf '    {\n      "version": %s,\n      "seconds": %s,\n' "$(json_str "$v")" "${SECONDS_OF[$v]}"
      if [[ -n ${PLUGINS[$v]:-} ]]; then
        printf '      "plugins": %s,\n' "$(json_str "${PLUGINS[$v]}")"
      fi
      printf '      "cells": {\n'
      j=0
      for f in "${FEATURES[@]}"; do
        j=$((j + 1))
        local cell=${RESULT[$v:$f]}
        printf '        %s: {"status": %s, "note": %s}%s\n' "$(json_str "$f")" \
          "$(json_str "${cell%%|*}")" "$(json_str "${cell#*|}")" "$( ((j < ${#FEATURES[@]})) && echo ,)"
      done
      printf '      }\n    }%s\n' "$( ((i < ${#VERSIONS[@]})) && echo ,)"
    done
    printf '  ]\n}\n'
  } >"$out"
}

# ok: ✅; refused (the documented refusal, asserted): ➖ note; failed or unavailable: ❌ note.
render_cell() {
  local status=${1%%|*} note=${1#*|}
  case $status in
    ok) printf '✅' ;;
    refused) printf '➖ %s' "$note" ;;
    *) printf '❌ %s' "$note" ;;
  esac
}

write_markdown() {
  local out=$1 args=$2 v f
  {
    cat <<'DOC'
# Compatibility

Which Kafka Connect releases kco works with, **measured**: `scripts/compat.sh` starts the
local test bed (`scripts/local-connect.sh`: one KRaft broker, a two-worker and a one-worker
distributed cluster, a standalone worker, PostgreSQL 15 with the Debezium 3.6.1
PostgreSQL connector) at each release, runs the whole e2e suite (`tests/e2e`, which drives
the `kco` binary and raw REST calls), stops it, and writes this page and
`compatibility.json` beside it. Do not edit the table by hand: `tests/e2e/compat_doc.rs`
fails when it and the JSON disagree.

- ✅ every e2e test of that feature passed on that release.
- ➖ the release lacks the feature and kco's documented refusal was asserted instead.
- ❌ failed or could not run, with the reason.

Columns: `snapshot`, `diff`, `apply` (rewinds, `--prune`, states put back, an apply during a
worker restart), `apply --create` (a connector created STOPPED, KIP-980), `reset`, the
offsets REST API itself (the behaviour in [connect-behaviour.md](connect-behaviour.md)),
the standalone worker (source offsets in a file), and the connector kinds, each through
snapshot, change, diff, apply and the effect on the records downstream: MirrorMaker 2's
`MirrorSourceConnector`, Debezium's PostgreSQL connector, a sink with
`consumer.override.group.id` and a sink over a 100-partition topic.

DOC
    printf 'Produced by `%s` on %s, with:\n\n' "scripts/compat.sh${args:+ $args}" "$(date -u +%F)"
    printf '```sh\nscripts/compat.sh            # the whole matrix (about 7 minutes a release)\nscripts/compat.sh 3.7.2 4.3.1  # some releases (the page then lists only those)\n```\n\n'
    printf '<!-- table:begin -->\n| Kafka |'
    for f in "${FEATURES[@]}"; do printf ' %s |' "${LABEL[$f]}"; done
    printf '\n|---|'
    for f in "${FEATURES[@]}"; do printf -- '---|'; done
    printf '\n'
    for v in "${VERSIONS[@]}"; do
      printf '| %s |' "$v"
      for f in "${FEATURES[@]}"; do printf ' %s |' "$(render_cell "${RESULT[$v:$f]}")"; done
      printf '\n'
    done
    printf '<!-- table:end -->\n\nTime per release (test bed up, e2e suite, down):'
    for v in "${VERSIONS[@]}"; do printf ' %s %ss;' "$v" "${SECONDS_OF[$v]}"; done
    printf '\n\n'
    for v in "${VERSIONS[@]}"; do
      [[ -n ${PLUGINS[$v]:-} ]] || continue
      printf 'Kafka %s ran with the FileStream and MirrorMaker 2 plugins of %s (`connect-file`,\n' "$v" "${PLUGINS[$v]}"
      printf '`connect-mirror`): its own are not in the Maven repository, so the test bed runs its\n'
      printf 'broker and worker (runtime, clients, API) with the newest plugin jars that resolve.\n\n'
    done
    cat <<'DOC'
Releases: the latest patch of each line from 3.6 whose jars Maven resolves. In the 4.2 line
only 4.2.0 does: 4.2.1 lacks `connect-file` and `connect-mirror-client`, 4.2.2
`connect-file` and `connect-mirror`. No newer patch than those listed (3.6.3, 3.7.3, 3.8.2,
3.9.3, 4.0.3, 4.1.3) was published when this ran.

Plugins built against an older Kafka may call classes a newer release has moved: Kafka 4.4
moved `AppInfoParser` and `Sanitizer` to `org.apache.kafka.common.utils.internals`, which the
FileStream plugins of 4.3 (their version) and Debezium 3.6.1 (its metrics: its task fails with
`NoClassDefFoundError: org/apache/kafka/common/utils/Sanitizer`) call. The test bed adds
stand-ins that call the new classes (`testbed/shims`, compiled only for a release that lacks
the old ones); an operator running those plugins on Connect 4.4 meets the same failures.

CI (`scripts/test.sh`) runs the default release (4.3.1) in full and the e2e suite on the
oldest supported one (3.6.2), and reads and writes the offsets of a Kafka Connect 3.4.1
worker, which has no offsets endpoints, through Kafka ([through-kafka.md](through-kafka.md)); this matrix runs on demand. Kafka 3.x runs with reload4j
logging. Releases before 3.6 have no `PATCH`/`DELETE .../offsets`: kco reads offsets through
the REST API from 3.5 on, and through Kafka from older workers where kco.yaml gives their
cluster `kafka:` and `connectTopics.offsets`; there it also writes them through Kafka, for a
connector that does not exist or is stopped. Without those, it refuses `apply` and `reset` on
workers before 3.6 with the version it found and the one needed (unit tests in
`src/engine/probe.rs`).
DOC
  } >"$out"
}
