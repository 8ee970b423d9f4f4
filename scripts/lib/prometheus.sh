# Sourced by test.sh and monitoring.sh: Debian's Prometheus and node-exporter, installed with
# apt-get when missing (as root), their services not started by the packages (the test bed
# starts its own, on loopback ports).
# shellcheck shell=bash

# ensure_prometheus
# promtool, prometheus and prometheus-node-exporter on PATH, installed from Debian's packages
# when missing (as root). A package's postinst would start its service where no
# /usr/sbin/policy-rc.d says no: one that answers 101 is put there for the install.
ensure_prometheus() {
  if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 &&
    command -v prometheus-node-exporter >/dev/null 2>&1; then
    return 0
  fi
  if ! command -v apt-get >/dev/null 2>&1 || [[ $(id -u) != 0 ]]; then
    echo "prometheus, promtool or prometheus-node-exporter not found; install them (Debian/Ubuntu: apt-get install prometheus prometheus-node-exporter)" >&2
    return 1
  fi
  echo "installing prometheus and prometheus-node-exporter with apt-get" >&2
  local guard=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    guard=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$guard"
    chmod +x "$guard"
  fi
  local pkgs=(prometheus prometheus-node-exporter) rc=0
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >&2 || {
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >&2
  } || rc=$?
  [[ -n $guard ]] && rm -f "$guard"
  return "$rc"
}
