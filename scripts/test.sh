#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Runs every check CI runs: formatting, lints, build, unit and CLI tests, then the
# end-to-end suite against a local Kafka Connect test bed, which it starts and stops: on
# the default Kafka release, then again on the oldest supported one (3.6.2). A test bed
# already running on the default ports (scripts/demo.sh leaves one up) is left alone: the
# suite starts its own, every port 10000 higher, state in target/testbed. The whole
# matrix of releases is scripts/compat.sh.
#
# Installs what is missing: the rustfmt and clippy components (rustup), actionlint (go
# install, into target/tools) and, on Debian or Ubuntu as root, Java 17, Maven, curl,
# ShellCheck, podman and runc, and openssh-server for the image test's SSH remote (apt-get).
# The test bed's Kafka jars (Maven) include a Kafka Connect 3.4 worker's (cluster l).
#
# Environment:
#   KCO_TESTBED_KEEP=1   leave the test bed running afterwards
#   KCO_UNIT_THREADS     unit and CLI tests run in parallel (default 4)
#   KCO_E2E_THREADS      e2e tests run in parallel (default 6)
#   KAFKA_VERSION, KCO_TESTBED_*   passed on to scripts/local-connect.sh
#   KCO_TEST_OLDEST=0    skip the e2e run on the oldest release (done only when this
#                        script started the test bed itself)
#   CI=true              build with --locked and print the test bed logs on failure
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
LC=(bash "$ROOT/scripts/local-connect.sh")
# shellcheck source=lib/e2e-env.sh
source "$ROOT/scripts/lib/e2e-env.sh"
START=$SECONDS

# Whether something listens on a default port of the test bed (its broker, cluster a, the
# DR region's broker).
default_ports_taken() {
  local port
  for port in 9092 8083 9192; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
  done
  return 1
}

# The suite's own test beds, beside one already running on the default ports: every port
# 10000 higher, state in target/testbed.
suite_testbed() {
  export KCO_TESTBED_DIR=$ROOT/target/testbed
  export KCO_TESTBED_KAFKA_PORT=19092 KCO_TESTBED_CONTROLLER_PORT=19093
  export KCO_TESTBED_A1_PORT=18083 KCO_TESTBED_A2_PORT=18084 KCO_TESTBED_B_PORT=18085
  export KCO_TESTBED_S_PORT=18086 KCO_TESTBED_PG_PORT=15433
  export KCO_SECURE_PORT=18443 KCO_GATEWAY_PORT=18444 KCO_MSK_CONNECT_PORT=18095
  export KCO_DR_KAFKA_PORT=19192 KCO_DR_SASL_PORT=19194 KCO_DR_CONTROLLER_PORT=19195
  export KCO_DR_CONNECT_PORT=18090 KCO_DR_BACK_PORT=18091 KCO_LEGACY_PORT=18087
  export KCO_PROMETHEUS_PORT=19090 KCO_NODE_EXPORTER_PORT=19100 KCO_IAM_PORT=19096
}
STEP="start"
STEP_START=$SECONDS
TIMES=()
TESTBED_OURS=0
CHILD=""
IMAGE_PID=""
LOCKED=()
[[ ${CI:-} == true ]] && LOCKED=(--locked)
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-auto}

step() {
  end_step
  STEP=$1
  STEP_START=$SECONDS
  printf '\n==> %s\n' "$STEP" >&2
}

end_step() {
  if [[ $STEP != start ]]; then
    TIMES+=("$(printf '%4ss  %s' "$((SECONDS - STEP_START))" "$STEP")")
  fi
  STEP=start
}

finish() {
  local rc=$?
  local failed_step=$STEP
  set +e
  stop_child
  ((rc == 0)) && end_step
  if ((TESTBED_OURS)); then
    if ((rc != 0)) && [[ ${CI:-} == true ]]; then
      dump_testbed_logs
    fi
    if [[ ${KCO_TESTBED_KEEP:-0} == 1 ]]; then
      echo "test.sh: test bed left running (KCO_TESTBED_KEEP=1); stop it with scripts/local-connect.sh down" >&2
    else
      printf '\n==> stopping the test bed\n' >&2
      bash "$ROOT/scripts/monitoring.sh" down >&2
      "${LC[@]}" down >&2
    fi
  fi
  if ((${#TIMES[@]} > 0)); then
    printf '\n' >&2
    printf '  %s\n' "${TIMES[@]}" >&2
  fi
  if ((rc == 0)); then
    printf 'test.sh: all checks passed in %ss\n' "$((SECONDS - START))" >&2
  else
    printf 'test.sh: FAILED in step "%s" (exit %s) after %ss\n' "$failed_step" "$rc" "$((SECONDS - START))" >&2
  fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs a command in the background and waits for it, so that INT and TERM reach the
# traps at once instead of after the command ends.
run() {
  "$@" &
  CHILD=$!
  local rc=0
  wait "$CHILD" || rc=$?
  CHILD=""
  return "$rc"
}

stop_child() {
  if [[ -n ${IMAGE_PID:-} ]]; then
    # Its own process group (setsid): cargo and rustc stop with it.
    kill -TERM -- "-$IMAGE_PID" 2>/dev/null
    wait "$IMAGE_PID" 2>/dev/null
    IMAGE_PID=""
  fi
  [[ -n $CHILD ]] || return 0
  pkill -TERM -P "$CHILD" 2>/dev/null
  kill -TERM "$CHILD" 2>/dev/null
  wait "$CHILD" 2>/dev/null
  CHILD=""
}

dump_testbed_logs() {
  local dir=${KCO_TESTBED_DIR:-$ROOT/.testbed}/logs log
  for log in "$dir"/*.log; do
    [[ -f $log ]] || continue
    printf '\n----- last 80 lines of %s\n' "$log" >&2
    tail -n 80 "$log" >&2
  done
}

# --- prerequisites ------------------------------------------------------------

ensure_rust() {
  command -v cargo >/dev/null 2>&1 || {
    echo "test.sh: cargo not found; install Rust 1.94.1 or newer with rustup" >&2
    exit 1
  }
  local component
  for component in rustfmt clippy; do
    local probe=(cargo fmt --version)
    [[ $component == clippy ]] && probe=(cargo clippy --version)
    if ! "${probe[@]}" >/dev/null 2>&1; then
      command -v rustup >/dev/null 2>&1 || {
        echo "test.sh: '${probe[*]}' fails and rustup is not available to add $component" >&2
        exit 1
      }
      echo "test.sh: adding the $component component" >&2
      rustup component add "$component"
    fi
  done
}

ensure_java_maven() {
  if "${LC[@]}" check >/dev/null 2>&1; then
    return 0
  fi
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    echo "test.sh: installing Java 17, Maven and curl with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # Releases without an openjdk-17 package get their default JDK (newer than 17).
    apt-get install -y -q --no-install-recommends --no-upgrade openjdk-17-jdk-headless maven curl ||
      apt-get install -y -q --no-install-recommends --no-upgrade default-jdk-headless maven curl
  fi
  # Fails with the precise reason when something is still missing.
  "${LC[@]}" check
}

# ShellCheck (a Debian package): run below, and by actionlint on the workflows' run: steps.
ensure_shellcheck() {
  command -v shellcheck >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    echo "test.sh: installing shellcheck with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends shellcheck >&2
  else
    echo "test.sh: shellcheck not found; install it (Debian/Ubuntu: apt-get install shellcheck)" >&2
    exit 1
  fi
}

# actionlint, a Go module at a fixed version, installed into target/tools (this script's own
# place: nothing outside the checkout changes).
ACTIONLINT_VERSION=v1.7.12
ACTIONLINT=$ROOT/target/tools/actionlint-$ACTIONLINT_VERSION/actionlint
ensure_actionlint() {
  [[ -x $ACTIONLINT ]] && return 0
  command -v go >/dev/null 2>&1 || {
    echo "test.sh: go not found: it installs actionlint $ACTIONLINT_VERSION (https://go.dev/dl/)" >&2
    exit 1
  }
  echo "test.sh: installing actionlint $ACTIONLINT_VERSION with go install" >&2
  GOBIN=$(dirname "$ACTIONLINT") GOPATH=$ROOT/target/tools/go GOFLAGS=-modcacherw \
    go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" >&2
}

# --- the checks ---------------------------------------------------------------

step "prerequisites"
ensure_rust
ensure_java_maven
# promtool checks kco's metrics in the CLI tests; prometheus and node-exporter run in the e2e.
# shellcheck source=lib/prometheus.sh
source "$ROOT/scripts/lib/prometheus.sh"
ensure_prometheus

step "no merge conflict markers in tracked files"
# A conflict resolved by committing both sides leaves git's markers behind. docs/merge.md
# shows the markers kco's merge driver writes (labelled ours and theirs), on purpose.
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
  if markers=$(git -C "$ROOT" grep -n -E '^(<<<<<<<|>>>>>>>)( |$)' |
    grep -v -E '^docs/merge\.md:[0-9]+:(<<<<<<< ours|>>>>>>> theirs)$'); then
    printf '%s\n' "$markers" >&2
    echo "test.sh: merge conflict markers are committed (above): resolve them" >&2
    exit 1
  fi
fi

step "cargo fmt --check"
run cargo fmt --all -- --check

step "cargo clippy"
run cargo clippy "${LOCKED[@]}" --all-targets -- -D warnings

# --- shipping: workflows, shell scripts, the crate, the image (docs/install.md) ---
step "actionlint (workflows and GitHub recipes)"
ensure_shellcheck
ensure_actionlint
run "$ACTIONLINT" .github/workflows/*.yml examples/ci/github/*.yml

step "shellcheck -S warning"
run shellcheck -S warning scripts/*.sh scripts/lib/*.sh

step "cargo package"
# --no-verify would skip the build from the packaged sources: the build proves the include
# list holds all the crate needs, and that kco builds without the test-only features (the
# tests below build it with the fake).
run cargo package --locked --allow-dirty --quiet

# --- end of shipping (the image is built below, while the e2e tests wait on Connect) ---

step "monitoring examples (promtool check rules, test rules)"
run promtool check rules examples/monitoring/kco-alerts.yaml
(cd examples/monitoring && run promtool test rules kco-alerts.test.yaml)
run shellcheck -S warning examples/monitoring/*.sh

step "unit and CLI tests"
unit_targets=(--bins --test cli)
[[ -f src/lib.rs ]] && unit_targets=(--lib "${unit_targets[@]}")
# Four at a time: most CLI tests wait on the binary they run and on the fake's latency.
# promtool was installed above: the CLI tests' metrics checks may not skip it.
run env KCO_PROMTOOL=required cargo test "${LOCKED[@]}" "${unit_targets[@]}" -- --test-threads "${KCO_UNIT_THREADS:-4}"

step "pre-commit hooks"
run bash "$ROOT/scripts/test-hooks.sh"

step "benchmark smoke run (small sizes; no time is asserted)"
missing=()
for tool in hyperfine jq curl; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
[[ -x /usr/bin/time ]] || missing+=(time)
if ((${#missing[@]})) && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  run apt-get install -y -qq "${missing[@]}" >/dev/null
fi
run scripts/bench.sh --quick
# The benches bench.sh does not run, and the scripts around them, once each on small sizes:
# the fleet bench's own table (10 connectors, a sink of 1,000 partitions, the hand loops
# too), the git history (20 connectors x 30 commits), two builds side by side (the same
# debug build twice, 2,000 partitions, one pair). The test bed's two are at the end.
run cargo bench "${LOCKED[@]}" --profile dev --features fake --bench fleet -- --connectors 10 --partitions 1000
run scripts/bench-git.sh --quick
run scripts/bench-release.sh target/debug/kco target/debug/kco --runs 1 --partitions 2000

step "test bed up"
if [[ -z ${KCO_TESTBED_DIR:-} ]] && { "${LC[@]}" status >/dev/null 2>&1 || default_ports_taken; }; then
  # A test bed already runs on the default ports (scripts/demo.sh leaves one up; or another
  # checkout's): the suite starts beds of its own, in a state directory and on ports of
  # their own, so that it runs everything CI runs (both Kafka releases) and leaves that one
  # as it is.
  suite_testbed
  echo "test.sh: a test bed already runs on the default ports; left alone: the suite's own is in $KCO_TESTBED_DIR, Kafka on 127.0.0.1:$KCO_TESTBED_KAFKA_PORT" >&2
fi
if "${LC[@]}" status >/dev/null 2>&1; then
  echo "test.sh: the test bed already runs; using it and leaving it up" >&2
else
  TESTBED_OURS=1
  run "${LC[@]}" up
fi
# The broker's listener IAM, MSK's IAM authentication stood in for (scripts/lib/testbed-iam.sh):
# part of every `up`, its tests (tests/e2e/msk_iam.rs) must run.
export KCO_E2E_IAM=required

# --- cluster s: HTTPS, client certificates, basic auth (scripts/secure-connect.sh) ---
# --- cluster g: cluster b behind a bearer-token HTTPS gateway (scripts/bearer-gateway.sh) ---
step "secure test bed up"
# Through `up --secure`, which holds the test bed's lock while it starts them (e2e checks
# that no service keeps it).
run "${LC[@]}" up --secure >/dev/null
if ((TESTBED_OURS)) && [[ ${KCO_TESTBED_KEEP:-0} != 1 ]]; then
  trap 'rc=$?; set +e; bash "$ROOT/scripts/dr-connect.sh" down >&2 || true; bash "$ROOT/scripts/legacy-connect.sh" down >&2 || true; bash "$ROOT/scripts/msk-connect.sh" down >&2 || true; bash "$ROOT/scripts/bearer-gateway.sh" down >&2 || true; bash "$ROOT/scripts/secure-connect.sh" down >&2 || true; (exit $rc); finish' EXIT
fi
export KCO_E2E_SECURE=required KCO_E2E_SECURE_URL="https://127.0.0.1:${KCO_SECURE_PORT:-8443}"
export KCO_E2E_GATEWAY=required KCO_E2E_GATEWAY_URL="https://127.0.0.1:${KCO_GATEWAY_PORT:-8444}"
# --- end of clusters s and g ---

# --- cluster l: a Kafka Connect 3.4 worker, no offsets endpoints (scripts/legacy-connect.sh) ---
step "legacy worker up (Kafka Connect 3.4)"
run bash "$ROOT/scripts/legacy-connect.sh" up >/dev/null
export KCO_E2E_LEGACY=required KCO_E2E_LEGACY_URL="http://127.0.0.1:${KCO_LEGACY_PORT:-8087}"
# --- end of cluster l ---

# --- MSK Connect stand-in on cluster a's worker (scripts/msk-connect.sh) ---
step "MSK Connect stand-in up"
run bash "$ROOT/scripts/msk-connect.sh" up >/dev/null
export KCO_E2E_MSK_CONNECT=required KCO_E2E_MSK_CONNECT_URL="http://127.0.0.1:${KCO_MSK_CONNECT_PORT:-8095}"
# --- end of the MSK Connect stand-in ---

# --- DR region west: a second broker, cluster w, MirrorMaker 2 (scripts/dr-connect.sh) ---
step "DR test bed up"
run bash "$ROOT/scripts/dr-connect.sh" up >/dev/null
export KCO_E2E_DR=required
# dr::east_comes_back_with_its_data stops this bed's broker and brings it back (alone, about
# 30 s): only on a bed the suite started, never on one it found running.
if ((TESTBED_OURS)); then
  export KCO_E2E_REGION=required
fi
# --- end of the DR region ---

# --- monitoring: node-exporter's textfile collector and Prometheus (scripts/monitoring.sh) ---
step "monitoring up (Prometheus, node-exporter)"
run bash "$ROOT/scripts/monitoring.sh" up >/dev/null
export KCO_E2E_PROMETHEUS=required
# The metrics files the e2e tests have kco write (snapshot, diff, ls, ls --orphaned, of two
# clusters) are copied here, for `promtool check metrics` after the e2e run.
export KCO_E2E_METRICS_COPY=$ROOT/target/e2e-metrics
rm -rf "$KCO_E2E_METRICS_COPY"
mkdir -p "$KCO_E2E_METRICS_COPY"

# `promtool check metrics` on every file kco wrote in the e2e tests (at least one).
check_metrics_files() {
  local f n=0
  for f in "$KCO_E2E_METRICS_COPY"/*.prom; do
    [[ -e $f ]] || continue
    run promtool check metrics <"$f" || {
      echo "test.sh: promtool check metrics refused $f" >&2
      exit 1
    }
    n=$((n + 1))
  done
  ((n > 0)) || {
    echo "test.sh: the e2e tests left no metrics file in $KCO_E2E_METRICS_COPY to check" >&2
    exit 1
  }
  echo "promtool check metrics: $n files" >&2
}
# --- end of monitoring ---

e2e_env "$ROOT"
# The image (scripts/image.sh): the release's code, static, unoptimised (Cargo.toml's
# image-check profile; scripts/release.sh builds what ships), built at the lowest priority
# while the e2e tests below mostly wait on Connect: it takes the CPU they leave idle.
# shellcheck source=lib/podman.sh
source "$ROOT/scripts/lib/podman.sh"
# The image test's SSH remote: sshd on loopback, its agent run as the image's user (setpriv).
ensure_packages /usr/sbin/sshd:openssh-server setpriv:util-linux ssh-agent:openssh-client
IMAGE_OUT=$ROOT/target/image-build.out
IMAGE_LOG=$ROOT/target/image-build.log
mkdir -p "$ROOT/target"
setsid nice -n 19 env KCO_IMAGE_PROFILE=image-check bash "$ROOT/scripts/image.sh" >"$IMAGE_OUT" 2>"$IMAGE_LOG" &
IMAGE_PID=$!

# Waits for the image build started above; its name is then in KCO_E2E_IMAGE.
wait_image() {
  if ! wait "$IMAGE_PID"; then
    IMAGE_PID=""
    echo "test.sh: scripts/image.sh failed:" >&2
    tail -n 40 "$IMAGE_LOG" >&2
    exit 1
  fi
  IMAGE_PID=""
  grep -v '^[0-9a-f]\{64\}$' "$IMAGE_LOG" | tail -n 3 >&2 || true
  KCO_E2E_IMAGE=$(tail -n 1 "$IMAGE_OUT")
}

# With a second run on the oldest release, the image's tests run among its tests (they
# mostly wait on podman and Connect, as the others do), and the image has both runs to build.
OLDEST_RUN=0
if ((TESTBED_OURS)) && [[ ${KCO_TEST_OLDEST:-1} == 1 && ${KAFKA_VERSION:-} != "$OLDEST_KAFKA_VERSION" ]]; then
  OLDEST_RUN=1
fi

step "compat.sh's features claim every e2e test"
# scripts/compat.sh grades each e2e test under a feature of docs/compatibility.md, and stops
# at one no feature claims: a new test file is named there in the same change.
# shellcheck source=lib/compat-render.sh
source "$ROOT/scripts/lib/compat-render.sh"
while read -r e2e_test; do
  feature_of "$e2e_test" >/dev/null || {
    echo "test.sh: no feature of scripts/lib/compat-render.sh claims the e2e test '$e2e_test' (add it to feature_of)" >&2
    exit 1
  }
done < <(cargo test "${LOCKED[@]}" --test e2e -- --list 2>/dev/null | sed -n 's/: test$//p')

step "e2e tests (Kafka ${KAFKA_VERSION:-default})"
run cargo test "${LOCKED[@]}" --test e2e -- --test-threads "${KCO_E2E_THREADS:-6}"

step "promtool check metrics (the files kco wrote in the e2e tests)"
check_metrics_files

step "benchmark smoke run on the test bed (small sizes; no time is asserted)"
# After the e2e run on the default Kafka release, so that what the benches leave (the offsets
# of deleted sources, a checkpoints topic on west) is in no test's way (the run on the oldest
# release starts on a fresh bed), and on a release that creates connectors STOPPED, which
# bench-dr.sh's `apply --create --dry-run` plans: one FileStream source applied on cluster a
# by kco and by the hand procedure (scripts/bench-testbed-apply.sh, which bench.sh's full run
# calls), and 20,000 checkpoints on the DR bed's broker west translated (scripts/bench-dr.sh).
run scripts/bench-testbed-apply.sh "$ROOT/target/debug/kco" "http://127.0.0.1:${KCO_TESTBED_A1_PORT:-8083}" "$ROOT/target/bench-testbed" 1
run scripts/bench-dr.sh --quick

if ((!OLDEST_RUN)); then
  step "image (scripts/image.sh; built during the e2e tests) and its e2e test"
  wait_image
  run env KCO_E2E_IMAGE="$KCO_E2E_IMAGE" cargo test "${LOCKED[@]}" --test e2e image:: -- --test-threads 1
fi

if ((OLDEST_RUN)); then
  step "test bed down, up on Kafka $OLDEST_KAFKA_VERSION"
  # Cluster s works on the broker that goes down: it was tested on the default release.
  run bash "$ROOT/scripts/bearer-gateway.sh" down >/dev/null
  run bash "$ROOT/scripts/secure-connect.sh" down >/dev/null
  # Cluster l is the same 3.4 worker whatever the broker's release: tested on the default one.
  run bash "$ROOT/scripts/legacy-connect.sh" down >/dev/null
  # The MSK Connect stand-in drives cluster a's worker whatever the broker's release: tested
  # on the default one.
  run bash "$ROOT/scripts/msk-connect.sh" down >/dev/null
  unset KCO_E2E_MSK_CONNECT KCO_E2E_MSK_CONNECT_URL
  unset KCO_E2E_SECURE KCO_E2E_SECURE_URL KCO_E2E_GATEWAY KCO_E2E_GATEWAY_URL
  unset KCO_E2E_LEGACY KCO_E2E_LEGACY_URL
  run "${LC[@]}" down
  run env KAFKA_VERSION="$OLDEST_KAFKA_VERSION" "${LC[@]}" up --dr

  step "image (scripts/image.sh; built during the e2e tests)"
  wait_image

  step "e2e tests (Kafka $OLDEST_KAFKA_VERSION; the image's among them)"
  run env KCO_E2E_IMAGE="$KCO_E2E_IMAGE" cargo test "${LOCKED[@]}" --test e2e -- --test-threads "${KCO_E2E_THREADS:-6}"
elif ((!TESTBED_OURS)); then
  echo "test.sh: the e2e run on Kafka $OLDEST_KAFKA_VERSION needs a test bed of its own; skipped because KCO_TESTBED_DIR names one that was already up" >&2
fi
