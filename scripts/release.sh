#!/usr/bin/env bash
# Builds the release archive of kco for one target: a statically linked binary (glibc
# static-pie: `-C target-feature=+crt-static`, no shared library needed at run time), with
# LICENSE, README.md, the man pages (man/man1/) and the completion scripts (completions/), as
#   dist/kco-<version>-<target>.tar.gz
# and (re)writes dist/SHA256SUMS for every archive in dist/. Prints the archive's path last.
#
# Usage: scripts/release.sh [--target TRIPLE] [--profile NAME] [--binary-only]
#   --target       default x86_64-unknown-linux-gnu
#   --profile      a Cargo profile other than `release` (the image test of scripts/test.sh
#                  uses `image-check`: the same code, unoptimised, built in half the time)
#   --binary-only  build and check the static binary, print its path; no archive, dist/ untouched
#
# Builds in target/dist (its own target directory: debug builds in target/ are left alone).
# The archive is reproducible for one commit: fixed file order, owner and times (the commit's
# date). Environment: CARGO (default cargo), KCO_DIST_DIR (default dist).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

TARGET=x86_64-unknown-linux-gnu
PROFILE=release
BINARY_ONLY=0
while (($#)); do
  case $1 in
    --target) TARGET=${2:?--target needs a value}; shift 2 ;;
    --target=*) TARGET=${1#--target=}; shift ;;
    --profile) PROFILE=${2:?--profile needs a value}; shift 2 ;;
    --profile=*) PROFILE=${1#--profile=}; shift ;;
    --binary-only) BINARY_ONLY=1; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "release.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

CARGO=${CARGO:-cargo}
DIST=${KCO_DIST_DIR:-$ROOT/dist}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[[ -n $VERSION ]] || { echo "release.sh: no version in Cargo.toml" >&2; exit 1; }

RUSTFLAGS_STATIC=()
case $TARGET in
  *-linux-gnu*) RUSTFLAGS_STATIC=(-C target-feature=+crt-static) ;;
esac

if command -v rustup >/dev/null 2>&1 && ! rustup target list --installed | grep -qx "$TARGET"; then
  echo "release.sh: adding the $TARGET target" >&2
  rustup target add "$TARGET" >&2
fi

echo "release.sh: building kco $VERSION for $TARGET (profile $PROFILE)" >&2
RUSTFLAGS="${RUSTFLAGS:-} ${RUSTFLAGS_STATIC[*]}" \
  "$CARGO" build --profile "$PROFILE" --locked --target "$TARGET" --target-dir "$ROOT/target/dist" --bin kco >&2
# Cargo's directory for the dev profile is `debug`; every other profile's is its name.
PROFILE_DIR=$PROFILE
[[ $PROFILE == dev ]] && PROFILE_DIR=debug
BIN=$ROOT/target/dist/$TARGET/$PROFILE_DIR/kco

# A static binary: no interpreter, no shared library (on Linux, where `file` can tell).
if [[ $TARGET == *-linux-* ]] && command -v file >/dev/null 2>&1; then
  desc=$(file -b "$BIN")
  if [[ $desc == *"dynamically linked"* && $desc != *"static-pie"* ]]; then
    echo "release.sh: $BIN is dynamically linked: $desc" >&2
    exit 1
  fi
fi

if ((BINARY_ONLY)); then
  echo "release.sh: $(du -h "$BIN" | cut -f1) binary" >&2
  echo "$BIN"
  exit 0
fi

NAME=kco-$VERSION-$TARGET
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir "$STAGE/$NAME"
cp "$BIN" "$STAGE/$NAME/kco"
cp LICENSE README.md "$STAGE/$NAME/"
chmod 0755 "$STAGE/$NAME/kco"
chmod 0644 "$STAGE/$NAME/LICENSE" "$STAGE/$NAME/README.md"
# The man pages (generated from the same clap definitions, checked current by the tests) and
# the completion scripts, where `install` puts them (docs/install.md).
mkdir -p "$STAGE/$NAME/man/man1" "$STAGE/$NAME/completions"
install -m 0644 docs/man/*.1 "$STAGE/$NAME/man/man1/"
if "$BIN" --version >/dev/null 2>&1; then
  "$BIN" completions bash >"$STAGE/$NAME/completions/kco.bash"
  "$BIN" completions zsh >"$STAGE/$NAME/completions/_kco"
  "$BIN" completions fish >"$STAGE/$NAME/completions/kco.fish"
  chmod 0644 "$STAGE/$NAME/completions/"*
else
  echo "release.sh: $TARGET's binary does not run here: the archive has no completion scripts (\`kco completions SHELL\` prints them)" >&2
  rmdir "$STAGE/$NAME/completions"
fi

mkdir -p "$DIST"
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
ARCHIVE=$DIST/$NAME.tar.gz
TAR=tar
command -v gtar >/dev/null 2>&1 && TAR=gtar
if "$TAR" --version 2>/dev/null | grep -q GNU; then
  "$TAR" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
    -C "$STAGE" -cf - "$NAME" | gzip -n -9 >"$ARCHIVE.tmp"
else
  # bsdtar (macOS without GNU tar): same contents, owner and order not normalised.
  "$TAR" -C "$STAGE" -cf - "$NAME" | gzip -n -9 >"$ARCHIVE.tmp"
fi
mv "$ARCHIVE.tmp" "$ARCHIVE"

# One line per archive in dist/, as `sha256sum -c` reads them.
(
  cd "$DIST"
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum -- *.tar.gz
  else
    shasum -a 256 -- *.tar.gz
  fi
) >"$DIST/SHA256SUMS.tmp"
mv "$DIST/SHA256SUMS.tmp" "$DIST/SHA256SUMS"

echo "release.sh: $(du -h "$BIN" | cut -f1) binary; $(du -h "$ARCHIVE" | cut -f1) archive; checksums in $DIST/SHA256SUMS" >&2
echo "$ARCHIVE"
