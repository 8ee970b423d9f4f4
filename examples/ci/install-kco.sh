#!/bin/sh
# Installs kco's release binary, checked against the release's SHA256SUMS first.
#
#   install-kco.sh VERSION [DEST]
#
# Downloads kco-VERSION-x86_64-unknown-linux-gnu.tar.gz (a static binary: any Linux x86_64,
# any libc) and SHA256SUMS from the GitHub release vVERSION of KCO_REPO (OWNER/NAME), checks
# the tarball's line of SHA256SUMS (`sha256sum -c`: GNU or BusyBox), and puts `kco` in DEST
# (default ~/.local/bin). KCO_RELEASES replaces the download base URL (a mirror, or file://
# in tests). Needs sh, curl, sha256sum, tar.
# Exit codes: 0 installed (and `kco --version` ran), 1 anything else (nothing installed).
set -eu

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: install-kco.sh VERSION [DEST]" >&2; exit 1; }
VERSION=${1#v}
DEST=${2:-$HOME/.local/bin}
TAR="kco-$VERSION-x86_64-unknown-linux-gnu.tar.gz"
if [ -z "${KCO_RELEASES-}" ]; then
  [ -n "${KCO_REPO-}" ] || { echo "install-kco: set KCO_REPO to the OWNER/NAME of kco's GitHub repository" >&2; exit 1; }
fi
BASE=${KCO_RELEASES:-https://github.com/${KCO_REPO-}/releases/download}/v$VERSION

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
curl -fsSL -o "$TAR" "$BASE/$TAR"
curl -fsSL -o SHA256SUMS "$BASE/SHA256SUMS"
# Only the tarball's line, so that a missing line fails (the same as --ignore-missing with GNU).
grep -E "^[0-9a-f]{64} [ *]$TAR\$" SHA256SUMS >ours.sha256 || {
  echo "install-kco: $TAR is not listed in the release's SHA256SUMS" >&2
  exit 1
}
sha256sum -c ours.sha256 >/dev/null || {
  echo "install-kco: $TAR does not match the release's SHA256SUMS: not installed" >&2
  exit 1
}
mkdir x
tar -xzf "$TAR" -C x
bin=$(find x -type f -name kco | head -n1)
[ -n "$bin" ] || { echo "install-kco: no kco binary in $TAR" >&2; exit 1; }
mkdir -p "$DEST"
cp "$bin" "$DEST/kco.tmp"
chmod 0755 "$DEST/kco.tmp"
mv "$DEST/kco.tmp" "$DEST/kco"
"$DEST/kco" --version >&2
