# Sourced by scripts/local-connect.sh: PostgreSQL for the Debezium connector, and the
# Debezium plugin directory.
#
# PostgreSQL runs from Debian's packages (installed with apt-get when missing and run as
# root), as the `postgres` user when started by root (initdb refuses root), on
# $HOST:$PG_PORT with wal_level=logical. Its bootstrap superuser `kco` (password `kco`,
# database `kco`) may replicate, as Debezium needs.
# shellcheck shell=bash

DEBEZIUM_POM="$ROOT/testbed/debezium/pom.xml"
PG_DATA_DIR="$STATE/data/pg"
PG_SOCKET_DIR="$STATE/run/pg"

# The directory holding initdb, pg_ctl and postgres: $PG_BIN, else the newest under
# /usr/lib/postgresql (Debian's layout).
pg_bindir() {
  if [[ -n ${PG_BIN:-} ]]; then
    echo "$PG_BIN"
    return
  fi
  local dir
  dir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null |
    sort -V | tail -n 1)
  [[ -n $dir && -x $dir/initdb ]] || return 1
  echo "$dir"
}

ensure_postgres() {
  pg_bindir >/dev/null && return 0
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    local start=$SECONDS
    say "PostgreSQL not found; installing it with apt-get (log: $STATE/logs/apt-postgres.log)"
    mkdir -p "$STATE/logs"
    export DEBIAN_FRONTEND=noninteractive
    {
      apt-get update -q &&
        { apt-get install -y -q --no-install-recommends --no-upgrade postgresql-15 ||
          apt-get install -y -q --no-install-recommends --no-upgrade postgresql; }
    } >"$STATE/logs/apt-postgres.log" 2>&1 ||
      die "apt-get could not install PostgreSQL (see $STATE/logs/apt-postgres.log)"
    say "PostgreSQL installed in $((SECONDS - start)) s"
  fi
  pg_bindir >/dev/null ||
    die "PostgreSQL not found under /usr/lib/postgresql (Debian: apt-get install postgresql-15; or set PG_BIN, or KCO_TESTBED_POSTGRES=0 to run without it)"
}

# Runs a PostgreSQL server tool as the user that owns the cluster.
pg_as_owner() {
  if [[ $(id -u) == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_pid() {
  local f="$PG_DATA_DIR/postmaster.pid" pid
  [[ -f $f ]] || return 1
  pid=$(head -n 1 "$f")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

pg_start() {
  ensure_postgres
  local bin log start=$SECONDS
  bin=$(pg_bindir)
  log=$(log_file pg)
  [[ -f $log ]] && mv -f "$log" "$log.1"
  mkdir -p "$PG_DATA_DIR" "$PG_SOCKET_DIR"
  printf 'kco\n' >"$PG_SOCKET_DIR/pwfile"
  : >"$log"
  if [[ $(id -u) == 0 ]]; then
    chown postgres: "$PG_DATA_DIR" "$PG_SOCKET_DIR" "$PG_SOCKET_DIR/pwfile" "$log"
  fi
  chmod 700 "$PG_DATA_DIR"
  say "starting PostgreSQL ($bin) on $HOST:$PG_PORT"
  pg_as_owner "$bin/initdb" -D "$PG_DATA_DIR" -U kco --pwfile="$PG_SOCKET_DIR/pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-instructions >>"$log" 2>&1 ||
    fail_with_log pg "initdb failed"
  without_lock pg_as_owner "$bin/pg_ctl" -D "$PG_DATA_DIR" -l "$log" -w -t 60 start -o \
    "-p $PG_PORT -k $PG_SOCKET_DIR -c listen_addresses=$HOST -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10 -c fsync=off -c synchronous_commit=off" \
    >/dev/null 2>&1 || fail_with_log pg "PostgreSQL did not start"
  pg_as_owner "$bin/psql" -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U kco -d postgres -q \
    -c 'CREATE DATABASE kco' >>"$log" 2>&1 || fail_with_log pg "CREATE DATABASE kco failed"
  say "PostgreSQL ready in $((SECONDS - start)) s"
}

pg_stop() {
  pg_pid >/dev/null || return 0
  local bin
  bin=$(pg_bindir) || return 0
  say "stopping PostgreSQL"
  pg_as_owner "$bin/pg_ctl" -D "$PG_DATA_DIR" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}

# Fills $STATE/plugins/debezium-postgres with the Debezium PostgreSQL connector and its
# dependencies (Kafka's own jars left out), unless it is there and newer than its pom.
debezium_plugin() {
  local dir="$STATE/plugins/debezium-postgres" out="$STATE/plugins/maven-debezium.log"
  if [[ -f $dir/.complete && ! $DEBEZIUM_POM -nt $dir/.complete ]]; then
    return 0
  fi
  check_maven
  local start=$SECONDS
  rm -rf "$dir"
  mkdir -p "$dir"
  say "resolving the Debezium PostgreSQL connector with Maven (log: $out)"
  mvn -B -q -f "$DEBEZIUM_POM" dependency:copy-dependencies "-DoutputDirectory=$dir" \
    -DexcludeGroupIds=org.apache.kafka >"$out" 2>&1 ||
    die "Maven could not resolve the Debezium connector (full output: $out)"
  ls "$dir"/debezium-connector-postgres-*.jar >/dev/null 2>&1 ||
    die "no debezium-connector-postgres jar in $dir (see $out)"
  touch "$dir/.complete"
  say "Debezium plugin resolved in $((SECONDS - start)) s"
}
