# Sourced by scripts/local-connect.sh, secure-connect.sh and dr-connect.sh: the settings
# they share, prerequisites, the Maven classpath and the processes of the test bed (start,
# stop, wait until ready). Each script sets STATE first, and sources daemon.sh.
# shellcheck shell=bash

# --- settings -----------------------------------------------------------------

HOST=127.0.0.1
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
WAIT_SECS=${KCO_TESTBED_WAIT_SECS:-180}
# Small heaps, serial GC and C1 only: the test bed must fit on two cores.
JVM_COMMON=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+ExitOnOutOfMemoryError
  -XX:-UsePerfData -Djava.awt.headless=true -Dfile.encoding=UTF-8)
LOG_OPTS=()

kafka_major() { echo "${KAFKA_VERSION%%.*}"; }
pid_file() { echo "$STATE/run/$1.pid"; }
log_file() { echo "$STATE/logs/$1.log"; }

# --- prerequisites ----------------------------------------------------------

check_java() {
  command -v "$JAVA" >/dev/null 2>&1 ||
    die "Java not found ('$JAVA'). Install Java 17 or newer (Debian: apt-get install openjdk-17-jdk-headless) or set JAVA_HOME."
  local spec
  spec=$("$JAVA" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = //p' | head -n 1)
  [[ -n $spec ]] || die "cannot tell the version of '$JAVA'"
  local major=${spec#1.}
  major=${major%%.*}
  ((major >= 17)) || die "Java $spec found at $(command -v "$JAVA"); Kafka $KAFKA_VERSION needs Java 17 or newer."
}

check_maven() {
  command -v mvn >/dev/null 2>&1 ||
    die "Maven not found. Install Maven 3.6.3 or newer (Debian: apt-get install maven); it fetches the Kafka jars."
  local v
  v=$(mvn -v 2>/dev/null | sed -n 's/.*Apache Maven \([0-9][0-9.]*\).*/\1/p' | head -n 1)
  [[ -n $v ]] || die "cannot tell the version of Maven ($(command -v mvn))"
  local major minor patch
  IFS=. read -r major minor patch <<<"$v"
  if ((major < 3 || (major == 3 && (minor < 6 || (minor == 6 && ${patch:-0} < 3))))); then
    die "Maven $v found; 3.6.3 or newer is needed."
  fi
}

check_tools() {
  command -v curl >/dev/null 2>&1 || die "curl not found (Debian: apt-get install curl)"
  check_java
  [[ $KAFKA_VERSION =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "KAFKA_VERSION '$KAFKA_VERSION' is not X.Y.Z"
  local major=${KAFKA_VERSION%%.*} minor
  minor=${KAFKA_VERSION#*.}
  minor=${minor%%.*}
  if ((major < 3 || (major == 3 && minor < 6))); then
    die "KAFKA_VERSION $KAFKA_VERSION is too old: the offsets API needs Kafka 3.6 or newer."
  fi
}

# --- classpath ----------------------------------------------------------------

# Prints the path of a file holding the runtime classpath for KAFKA_VERSION. The file is
# cached under $STATE/classpath and rebuilt with Maven when missing, older than the pom,
# or naming a jar that is gone.
classpath_file() {
  local cp="$STATE/classpath/$KAFKA_VERSION.txt"
  if [[ -s $cp && ! $POM -nt $cp ]] && classpath_complete "$cp"; then
    echo "$cp"
    return
  fi
  check_maven
  mkdir -p "$STATE/classpath"
  local out="$STATE/classpath/maven-$KAFKA_VERSION.log" tmp="$cp.tmp" plugins
  rm -f "$STATE/classpath/$KAFKA_VERSION.plugins"
  say "resolving Kafka $KAFKA_VERSION jars with Maven (first run downloads them)..."
  if ! resolve_classpath "$KAFKA_VERSION" "$tmp" "$out"; then
    # A release whose FileStream and MirrorMaker 2 plugin jars are not published (4.4.0):
    # its runtime with the newest plugin release before it that resolves.
    if grep -Eq 'connect-(file|mirror)' "$out" &&
      plugins=$(older_plugins "$tmp" "${out%.log}-plugins.log"); then
      say "connect-file and connect-mirror $KAFKA_VERSION are not published; running the $KAFKA_VERSION worker with those of $plugins"
      echo "$plugins" >"$STATE/classpath/$KAFKA_VERSION.plugins"
    else
      sed 's/\x1b\[[0-9;]*m//g' "$out" | grep -m 1 'ERROR' >&2 || true
      die "Maven could not resolve Kafka $KAFKA_VERSION (full output: $out)"
    fi
  fi
  [[ -s $tmp ]] || die "Maven wrote no classpath (see $out)"
  add_shims "$tmp"
  mv "$tmp" "$cp"
  echo "$cp"
}

# Resolves the classpath of release $1 (plugin jars of release $4, default $1) into $2,
# Maven's output in $3. Kafka's test connectors are not published for every release: tried
# with, then without.
resolve_classpath() {
  local v=$1 tmp=$2 out=$3 plugins=${4:-$1}
  local -a args=(-B -q -f "$POM" dependency:build-classpath
    "-Dkafka.version=$v" "-Dkafka.plugins.version=$plugins" "-Dmdep.outputFile=$tmp")
  if (($(kafka_major) < 4)); then
    args+=(-Dkafka.log4j1)
  fi
  if mvn "${args[@]}" -Dkafka.test.plugins >"$out" 2>&1; then
    return 0
  elif grep -q 'connect-test-plugins' "$out" && mvn "${args[@]}" >"$out" 2>&1; then
    say "connect-test-plugins $v is not published; continuing without it"
    return 0
  fi
  return 1
}

# Plugins built against an older Kafka call classes the release has moved (Kafka 4.4 moved
# AppInfoParser and Sanitizer to ...common.utils.internals; the FileStream plugins of 4.3 and
# Debezium 3.6 call them): for each class of testbed/shims that the classpath in $1 lacks and
# whose new home it has, a stand-in that calls the new one, compiled with the JDK into a jar
# added to the classpath. Older releases have the classes: nothing is compiled.
add_shims() {
  local cp_file=$1 cp src class out="$STATE/classpath/shims-$KAFKA_VERSION"
  local -a missing=()
  cp=$(<"$cp_file")
  while IFS= read -r -d '' src; do
    class=${src#"$ROOT/testbed/shims/"}
    class=${class%.java}
    class=${class//\//.}
    javap -cp "$cp" "$class" >/dev/null 2>&1 && continue
    javap -cp "$cp" "${class%.*}.internals.${class##*.}" >/dev/null 2>&1 && missing+=("$src")
  done < <(find "$ROOT/testbed/shims" -name '*.java' -print0)
  ((${#missing[@]} > 0)) || return 0
  rm -rf "$out" && mkdir -p "$out/classes"
  javac -nowarn -d "$out/classes" -cp "$cp" "${missing[@]}" >"$out/javac.log" 2>&1 ||
    die "could not compile the test bed's shims for the older plugins (see $out/javac.log)"
  jar cf "$out.jar" -C "$out/classes" . || die "could not package the test bed's shims"
  say "stand-ins for classes Kafka $KAFKA_VERSION moved: ${missing[*]##*/}"
  printf ':%s' "$out.jar" >>"$cp_file"
}

# The newest release before $KAFKA_VERSION (of the releases below, newest first) whose
# plugin jars resolve with it; prints it. Fails when none does.
older_plugins() {
  local tmp=$1 out=$2 candidate
  for candidate in 4.3.2 4.3.1 4.3.0 4.2.0 4.1.2 4.0.2; do
    version_before "$candidate" "$KAFKA_VERSION" || continue
    if resolve_classpath "$KAFKA_VERSION" "$tmp" "$out" "$candidate"; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

# Whether release $1 is older than release $2 (X.Y.Z).
version_before() {
  [[ $1 != "$2" && $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1) == "$1" ]]
}

classpath_complete() {
  local jar
  while IFS= read -r -d: jar || [[ -n $jar ]]; do
    jar=${jar%$'\n'}
    [[ -z $jar || -f $jar ]] || return 1
  done <"$1"
}

# --- processes ----------------------------------------------------------------

# The pid of NAME when it is running and really is the process this script started.
live_pid() {
  local f
  f=$(pid_file "$1")
  [[ -f $f ]] || return 1
  local pid
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "-Dkco.testbed.process=$1 -Dkco.testbed.dir=$STATE " ||
    return 1
  echo "$pid"
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# start_proc NAME MAIN_CLASS HEAP_OPTS... -- ARGS...
start_proc() {
  local name=$1 main=$2
  shift 2
  local -a heap=()
  while [[ $1 != -- ]]; do
    heap+=("$1")
    shift
  done
  shift
  local log pidf
  log=$(log_file "$name")
  pidf=$(pid_file "$name")
  printf '\n===== %s: starting %s (Kafka %s) =====\n' "$(date -u +%FT%TZ)" "$name" "$KAFKA_VERSION" >>"$log"
  spawn_daemon "$pidf" "$log" \
    "$JAVA" "${heap[@]}" "${JVM_COMMON[@]}" \
    "-Dkco.testbed.process=$name" "-Dkco.testbed.dir=$STATE" \
    "${LOG_OPTS[@]}" "@$STATE/conf/classpath.args" "$main" "$@"
  local i
  for ((i = 0; i < 50; i++)); do
    [[ -s $pidf ]] && return 0
    sleep 0.1
  done
  die "$name did not start (see $log)"
}

stop_procs() {
  local -a names=("$@") pids=() alive=()
  local name pid
  for name in "${names[@]}"; do
    if pid=$(live_pid "$name"); then
      say "stopping $name (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    alive=()
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then alive+=("$pid"); fi
    done
    ((${#alive[@]} == 0)) && break
    sleep 0.2
  done
  for pid in "${alive[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid ignored TERM for 30 s; sending KILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  for pid in "${alive[@]}"; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  done
  for name in "${names[@]}"; do rm -f "$(pid_file "$name")"; done
}

fail_with_log() {
  local name=$1 msg=$2 log
  log=$(log_file "$name")
  {
    printf '%s: error: %s\n' "$PROG" "$msg"
    printf '%s: last lines of %s:\n' "$PROG" "$log"
    tail -n 25 "$log" | sed 's/^/    /'
    printf '%s: full log: %s\n' "$PROG" "$log"
  } >&2
  exit 1
}

wait_broker() {
  local deadline=$((SECONDS + WAIT_SECS))
  until port_open "$KAFKA_PORT"; do
    live_pid broker >/dev/null || fail_with_log broker "the broker exited during startup"
    ((SECONDS < deadline)) || fail_with_log broker "the broker did not listen on $HOST:$KAFKA_PORT within ${WAIT_SECS}s"
    sleep 0.2
  done
}

# Ready = REST answers GET /, the herder serves GET /connectors, and the FileStream
# plugins are listed.
worker_ready() {
  local url plugins
  url=$(worker_url "$1")
  curl -fsS -m 5 -o /dev/null "$url/" 2>/dev/null || return 1
  curl -fsS -m 5 -o /dev/null "$url/connectors" 2>/dev/null || return 1
  plugins=$(curl -fsS -m 5 "$url/connector-plugins" 2>/dev/null) || return 1
  [[ $plugins == *FileStreamSourceConnector* && $plugins == *FileStreamSinkConnector* ]]
}

wait_workers() {
  local deadline=$((SECONDS + WAIT_SECS)) name
  local -a pending=("$@") still=()
  while ((${#pending[@]} > 0)); do
    still=()
    for name in "${pending[@]}"; do
      if ! worker_ready "$name"; then
        live_pid "$name" >/dev/null || fail_with_log "$name" "worker $name exited during startup"
        still+=("$name")
      fi
    done
    pending=("${still[@]}")
    ((${#pending[@]} == 0)) && break
    ((SECONDS < deadline)) ||
      fail_with_log "${pending[0]}" "worker ${pending[0]} did not become ready at $(worker_url "${pending[0]}") within ${WAIT_SECS}s"
    sleep 0.5
  done
}

