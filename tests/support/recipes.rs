//! The `kco` the recipes of `examples/ci` run in tests.
//!
//! `apply-on-merge.sh` applies a change with `kco apply DIR --commit SHA` (the delta one commit
//! brought, from its first parent to it). Until a build has that flag, this wrapper runs the
//! same apply the older way: `kco apply FILES --at SHA`, the files SHA changed under DIR, as at
//! SHA. The tests give it changes whose untouched partitions equal live, so both plan the same;
//! once `apply --help` shows `--commit <`, every call passes through unchanged.

use std::path::{Path, PathBuf};

/// Writes the wrapper into `dir`; its path, for the recipes' `KCO`.
pub fn kco_for_recipes(dir: &Path) -> PathBuf {
    let path = dir.join("kco-for-recipes.sh");
    let script = format!(
        r#"#!/bin/sh
real='{}'
if "$real" apply --help | grep -q -- '--commit <'; then exec "$real" "$@"; fi
case " $* " in *" apply "*" --commit "*) ;; *) exec "$real" "$@" ;; esac
case " $* " in *" snapshot "*) exec "$real" "$@" ;; esac
dir= sha= prev=
for a in "$@"; do
  [ "$prev" = apply ] && dir=$a
  [ "$prev" = --commit ] && sha=$a
  prev=$a
done
files=$(git diff --name-only "$sha^" "$sha" -- "$dir")
for a in "$@"; do
  shift
  if [ "$a" = "$dir" ]; then set -- "$@" $files
  elif [ "$a" = --commit ]; then set -- "$@" --at
  else set -- "$@" "$a"; fi
done
exec "$real" "$@"
"#,
        env!("CARGO_BIN_EXE_kco")
    );
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
