//! The snapshot file parser and validator on arbitrary bytes: never a panic, and a file that
//! parses and checks clean renders to text that parses and checks clean again, with the same
//! offsets (the round trip `kco fmt` relies on).
#![no_main]

use std::path::Path;

use kco::model::file::{OffsetsFile, DEFAULT_SCHEMA_REF};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.yaml");
    let Ok(file) = OffsetsFile::parse(path, text) else {
        return;
    };
    let problems = file.check(path, text);
    let _ = file.is_canonical_text(text);
    if !problems.is_empty() {
        return;
    }
    let rendered = file.render(DEFAULT_SCHEMA_REF);
    let again = OffsetsFile::parse(path, &rendered)
        .unwrap_or_else(|p| panic!("a valid file rendered to an invalid one: {p}\n{rendered}"));
    let problems = again.check(path, &rendered);
    assert!(problems.is_empty(), "{problems:?}\n{rendered}");
    assert_eq!(again.offsets, file.offsets, "{rendered}");
});
