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
  local certs=()
  [[ -f /etc/ssl/certs/ca-certificates.crt ]] || certs=(update-ca-certificates:ca-certificates)
  ensure_packages podman:podman runc:runc "${certs[@]}"
}

# Installs, with apt-get (as root), the package of each COMMAND:PACKAGE whose command is missing.
ensure_packages() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
  done
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
