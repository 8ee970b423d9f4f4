#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Monitoring for kco's e2e tests: Debian's prometheus-node-exporter, reading kco's metrics
# files from a textfile-collector directory, and Debian's prometheus, scraping it every second
# and evaluating examples/monitoring/kco-alerts.yaml every second, each rule's `for:` cut to
# 2 s (so that a test sees an alert fire in seconds); both on 127.0.0.1.
#
# Usage: scripts/monitoring.sh <command>
#   up       install prometheus and prometheus-node-exporter if missing (as root, with
#            apt-get; their services are not started), start both, wait until Prometheus
#            has scraped node-exporter once. Harmless when already up: then it reloads
#            Prometheus with the rules as they are now.
#   down     stop both and delete their files
#   status   show each one's pid and URL (exit 0 only when both run)
#
# Writes <state>/monitoring/: textfile/ (where a test writes kco's --metrics-file),
# prometheus.yml, the TSDB and the logs.
#
# Environment:
#   KCO_PROMETHEUS_PORT      Prometheus' port (default 9090)
#   KCO_NODE_EXPORTER_PORT   node-exporter's port (default 9100)
#   KCO_TESTBED_DIR          as for scripts/local-connect.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=lib/daemon.sh
source "$ROOT/scripts/lib/daemon.sh"
# shellcheck source=lib/prometheus.sh
source "$ROOT/scripts/lib/prometheus.sh"
STATE=${KCO_TESTBED_DIR:-$ROOT/.testbed}
MON="$STATE/monitoring"
HOST=127.0.0.1
PROM_PORT=${KCO_PROMETHEUS_PORT:-9090}
NODE_PORT=${KCO_NODE_EXPORTER_PORT:-9100}

# The pid of NAME (prometheus or node-exporter) when it runs and is the one started here.
live_pid() {
  local f="$MON/$1.pid" pid
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$MON" || return 1
  echo "$pid"
}

write_config() {
  # The shipped rules, every `for:` cut to 2 s: an alert that waits 10m in production fires
  # here within seconds of its condition.
  sed -E 's/^([[:space:]]*for:).*/\1 2s/' "$ROOT/examples/monitoring/kco-alerts.yaml" >"$MON/kco-alerts.yaml"
  cat >"$MON/prometheus.yml" <<EOC
# kco's e2e monitoring (scripts/monitoring.sh): node-exporter's textfile collector, scraped
# every second; kco's alert rules evaluated every second, their \`for:\` cut to 2 s.
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $MON/kco-alerts.yaml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ["$HOST:$NODE_PORT"]
EOC
}

# Prometheus has scraped node-exporter (its target is up).
scraped() {
  curl -fsS "http://$HOST:$PROM_PORT/api/v1/query?query=up%7Bjob%3D%22node%22%7D%3D%3D1" 2>/dev/null |
    grep -q '"result":\[{'
}

cmd_up() {
  ensure_prometheus || die "prometheus and prometheus-node-exporter are needed"
  mkdir -p "$MON/textfile" "$MON/data"
  write_config
  if ! live_pid node-exporter >/dev/null; then
    spawn_daemon "$MON/node-exporter.pid" "$MON/node-exporter.log" \
      prometheus-node-exporter --web.listen-address="$HOST:$NODE_PORT" \
      --collector.disable-defaults --collector.textfile \
      --collector.textfile.directory="$MON/textfile"
  fi
  if ! live_pid prometheus >/dev/null; then
    spawn_daemon "$MON/prometheus.pid" "$MON/prometheus.log" \
      prometheus --config.file="$MON/prometheus.yml" --storage.tsdb.path="$MON/data" \
      --web.listen-address="$HOST:$PROM_PORT" --web.enable-lifecycle
  else
    curl -fsS -X POST "http://$HOST:$PROM_PORT/-/reload" >/dev/null ||
      die "Prometheus did not reload its rules; see $MON/prometheus.log"
  fi
  local _
  for _ in $(seq 300); do
    scraped && break
    sleep 0.2
  done
  scraped || die "Prometheus has not scraped node-exporter; see $MON/prometheus.log and $MON/node-exporter.log"
  say "up: Prometheus http://$HOST:$PROM_PORT, node-exporter http://$HOST:$NODE_PORT, textfile directory $MON/textfile"
}

cmd_down() {
  local name pid
  for name in prometheus node-exporter; do
    if pid=$(live_pid "$name"); then
      say "stopping $name (pid $pid)"
      stop_daemon "$pid" TERM 100
    fi
  done
  rm -rf "$MON"
}

cmd_status() {
  local name pid rc=0
  for name in prometheus node-exporter; do
    if pid=$(live_pid "$name"); then
      local port=$PROM_PORT
      [[ $name == node-exporter ]] && port=$NODE_PORT
      printf '  %-14s pid %-7s http://%s:%s\n' "$name" "$pid" "$HOST" "$port"
    else
      printf '  %-14s stopped\n' "$name"
      rc=1
    fi
  done
  return "$rc"
}

service_main "$0" "${1:-}"
