//! `kco.yaml` on arbitrary bytes: parsing, `${env:VAR}` interpolation and cluster resolution
//! never panic. TLS file names are dropped before resolving (the fuzzer must not read
//! arbitrary paths such as /dev/zero).
#![no_main]

use std::path::Path;

use kco::config::{interpolate, Config};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env = |k: &str| (k.len() % 2 == 0).then(|| format!("v-{k}"));
    let _ = interpolate(text, &env);
    if text.contains("File") {
        let _ = Config::parse(Path::new("/nonexistent/kco.yaml"), text);
        return;
    }
    let Ok(config) = Config::parse(Path::new("/nonexistent/kco.yaml"), text) else {
        return;
    };
    let _ = config.snapshots_dir();
    let _ = config.resolve(None, None, &env);
    for name in config.cluster_names() {
        let _ = config.resolve(Some(&name), None, &env);
        let _ = config.resolve(Some(&name), Some("http://u:p@h:1,https://h2"), &env);
    }
});
