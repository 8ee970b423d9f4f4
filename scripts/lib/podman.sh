# Sourced by scripts/image.sh and scripts/test.sh: podman as it runs on the machines kco is
# tested on, and its installation from Debian's packages when missing.
# shellcheck shell=bash

# podman's global options: KCO_PODMAN_OPTS when set, else what a rootful podman 4.3 needs in a
# sandbox without overlay or systemd (vfs storage, runc, cgroupfs).
podman_cmd() {
  local opts
  read -r -a opts <<<"${KCO_PODMAN_OPTS---storage-driver vfs --runtime runc --cgroup-manager cgroupfs}"
  # shellcheck disable=SC2034 # the caller runs "${PODMAN[@]}"
  PODMAN=(podman "${opts[@]}")
}

# `podman run`'s limits: the defaults are refused in some sandboxes.
# shellcheck disable=SC2034 # used by the scripts that source this file
PODMAN_ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

# Installs podman, runc and the CA certificates with apt-get (as root) when missing.
ensure_podman() {
  local missing=()
  command -v podman >/dev/null 2>&1 || missing+=(podman)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [[ -f /etc/ssl/certs/ca-certificates.crt ]] || missing+=(ca-certificates)
  ((${#missing[@]} == 0)) && return 0
  if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
    echo "installing ${missing[*]} with apt-get" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 || {
      apt-get update -q >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
    }
  else
    echo "missing: ${missing[*]} (install them, or run as root on Debian or Ubuntu)" >&2
    return 1
  fi
}
