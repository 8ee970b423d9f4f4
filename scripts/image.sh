#!/usr/bin/env bash
# Builds the kco image (Containerfile: FROM scratch, nothing to pull) with podman: the static
# binary of scripts/release.sh, the CA certificates of this machine's ca-certificates package,
# a numeric non-root user (10001), a writable /tmp, and git as this machine's Debian packages
# ship it (git, its HTTP(S) transport, the ssh client and the /bin/sh git runs credential
# helpers with, each with the shared libraries it links): kco takes the shared lock and reads
# a travelling journal with the `git` command, so the runner's credentials for the remote (an
# `http.<url>.extraheader`, a credential helper, an SSH agent) work in the image as they do on
# the runner. Prints the image reference last.
#
# Usage: scripts/image.sh [--tag IMAGE]   (default localhost/kco:<version>; KCO_IMAGE too)
#
# Installs podman, runc, ca-certificates, git and openssh-client with apt-get when missing
# (as root). podman's
# global options come from KCO_PODMAN_OPTS (default: --storage-driver vfs --runtime runc
# --cgroup-manager cgroupfs, which a rootful podman 4.3 needs in a sandbox).
# KCO_IMAGE_SOURCE sets the source label (default the repository of Cargo.toml).
# KCO_BINARY: a static kco already built (scripts/release.sh's), used instead of building.
# KCO_IMAGE_PROFILE: the Cargo profile of the binary it builds (default release; scripts/test.sh
# uses image-check, unoptimised, to test the image in half the build time).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=lib/podman.sh
source "$ROOT/scripts/lib/podman.sh"

VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
IMAGE=${KCO_IMAGE:-localhost/kco:$VERSION}
while (($#)); do
  case $1 in
    --tag) IMAGE=${2:?--tag needs a value}; shift 2 ;;
    --tag=*) IMAGE=${1#--tag=}; shift ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

ensure_podman
ensure_packages git:git ssh:openssh-client dash:dash
podman_cmd

if [[ -n ${KCO_BINARY:-} ]]; then
  BIN=$KCO_BINARY
else
  BIN=$(bash "$ROOT/scripts/release.sh" --target x86_64-unknown-linux-gnu \
    --profile "${KCO_IMAGE_PROFILE:-release}" --binary-only | tail -n 1)
fi

CTX=$(mktemp -d)
trap 'rm -rf "$CTX"' EXIT
R=$CTX/rootfs
mkdir -p "$R/usr/local/bin" "$R/etc/ssl/certs" "$R/tmp" "$CTX/work"
install -m 0755 "$BIN" "$R/usr/local/bin/kco"
# The man pages and the bash completion script, where a derived image's man and bash find them.
mkdir -p "$R/usr/local/share/man/man1" "$R/usr/local/share/bash-completion/completions"
install -m 0644 "$ROOT"/docs/man/*.1 "$R/usr/local/share/man/man1/"
"$BIN" completions bash >"$R/usr/local/share/bash-completion/completions/kco"
chmod 0644 "$R/usr/local/share/bash-completion/completions/kco"
install -m 0644 /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nkco:x:10001:10001:kco:/tmp:/sbin/nologin\n' >"$R/etc/passwd"
printf 'root:x:0:\nkco:x:10001:\n' >"$R/etc/group"
chmod 0644 "$R/etc/passwd" "$R/etc/group"
chmod 1777 "$R/tmp"
chmod 0755 "$CTX/work"
cp Containerfile "$CTX/Containerfile"

# git, as this machine runs it: its binary (builtins such as credential-store are `git X`),
# the HTTP(S) remote helper in its exec path, git-upload-pack and git-receive-pack (the git
# binary under those names, as Debian links them: what a remote on a path, a mounted volume or
# file://, runs on this side), the ssh client git runs for ssh:// remotes, and
# the /bin/sh it runs credential helpers with; then every shared library they link, at the
# path the dynamic loader resolved it to here (the loader itself included).
EXEC_PATH=$(git --exec-path)
stage() { # SOURCE [DEST]: a file at its path (or DEST) in the image, symlinks followed
  local dest=$R${2:-$1}
  mkdir -p "$(dirname "$dest")"
  cp -L "$1" "$dest"
}
stage "$(command -v git)" /usr/bin/git
stage "$EXEC_PATH/git-remote-http" "$EXEC_PATH/git-remote-http"
ln -s git-remote-http "$R$EXEC_PATH/git-remote-https"
ln -s /usr/bin/git "$R$EXEC_PATH/git"
for pack in git-upload-pack git-receive-pack; do
  ln -s git "$R/usr/bin/$pack"
  ln -s /usr/bin/git "$R$EXEC_PATH/$pack"
done
stage "$(command -v ssh)" /usr/bin/ssh
mkdir -p "$R/bin"
stage "$(command -v dash)" /bin/sh
for bin in /usr/bin/git "$EXEC_PATH/git-remote-http" /usr/bin/ssh /bin/sh; do
  for lib in $(ldd "$R$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
    [[ -e $R$lib ]] || stage "$lib"
  done
done

REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE=${KCO_IMAGE_SOURCE:-$(sed -n 's/^repository = "\(.*\)"/\1/p' Cargo.toml | head -1)}
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
CREATED=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)

echo "image.sh: building $IMAGE" >&2
"${PODMAN[@]}" build --quiet "${PODMAN_ULIMITS[@]}" \
  --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
  --build-arg "SOURCE=$SOURCE" --build-arg "CREATED=$CREATED" \
  --tag "$IMAGE" --file "$CTX/Containerfile" "$CTX" >&2
size=$("${PODMAN[@]}" image inspect --format '{{.Size}}' "$IMAGE")
echo "image.sh: $IMAGE is $((size / 1000)) kB" >&2
echo "$IMAGE"
