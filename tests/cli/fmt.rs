//! `kco fmt` and `kco fmt --check`.

use crate::snapshot::snapshot;
use crate::support::fakes::two_connectors;
use crate::support::run::Kco;

#[test]
fn check_lists_edited_files_and_fmt_reseals_them() {
    let dir = tempfile::tempdir().unwrap();
    let fake = two_connectors();
    assert_eq!(snapshot(&fake, dir.path(), &[]).code, 0);
    let r = Kco::new(dir.path()).args(["fmt", "--check"]).run();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);

    let sink = dir.path().join("snapshots/a/orders-sink.yaml");
    let edited = std::fs::read_to_string(&sink)
        .unwrap()
        .replace("kafka_offset: 5", "kafka_offset: 4");
    std::fs::write(&sink, &edited).unwrap();
    let r = Kco::new(dir.path()).args(["fmt", "--check"]).run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("snapshots/a/orders-sink.yaml")
            && r.stdout.contains("checksum to re-seal"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("file-src"), "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(&sink).unwrap(),
        edited,
        "--check changes nothing"
    );
    assert_eq!(Kco::new(dir.path()).arg("validate").run().code, 1);

    let r = Kco::new(dir.path()).arg("fmt").run();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("formatted"), "{}", r.stdout);
    assert_eq!(Kco::new(dir.path()).arg("validate").run().code, 0);
    assert_eq!(Kco::new(dir.path()).args(["fmt", "--check"]).run().code, 0);
    let text = std::fs::read_to_string(&sink).unwrap();
    assert!(text.contains("kafka_offset: 4") && text != edited);
}

#[test]
fn a_file_that_does_not_parse_is_named_with_its_line_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let fake = two_connectors();
    assert_eq!(snapshot(&fake, dir.path(), &[]).code, 0);
    let src = dir.path().join("snapshots/a/file-src.yaml");
    let broken = std::fs::read_to_string(&src)
        .unwrap()
        .replace("offsets:\n", "offsets: [\n");
    std::fs::write(&src, &broken).unwrap();
    for args in [&["fmt"][..], &["fmt", "--check"][..]] {
        let r = Kco::new(dir.path()).args(args).run();
        assert_eq!(r.code, 1, "{args:?}");
        let line = r
            .stdout
            .lines()
            .find(|l| l.contains("file-src.yaml:"))
            .unwrap_or_else(|| panic!("{}", r.stdout));
        assert!(line.contains("snapshots/a/file-src.yaml:"), "{line}");
        assert_eq!(std::fs::read_to_string(&src).unwrap(), broken);
    }
}

/// `-q` prints only data and errors: a file re-sealed is not reported, a file `--check`
/// finds not canonical (the reason it fails) and an invalid file still are.
#[test]
fn quiet_fmt_prints_no_formatted_lines_but_still_the_failures() {
    let dir = tempfile::tempdir().unwrap();
    let fake = two_connectors();
    assert_eq!(snapshot(&fake, dir.path(), &[]).code, 0);
    let sink = dir.path().join("snapshots/a/orders-sink.yaml");
    let edited = std::fs::read_to_string(&sink)
        .unwrap()
        .replace("kafka_offset: 5", "kafka_offset: 4");
    std::fs::write(&sink, &edited).unwrap();

    let r = Kco::new(dir.path()).args(["fmt", "--check", "-q"]).run();
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("not canonical:") && r.stdout.contains("orders-sink.yaml"),
        "{}",
        r.stdout
    );

    let r = Kco::new(dir.path()).args(["fmt", "-q"]).run();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "", "quiet: no `formatted:` line");
    assert_eq!(r.stderr, "", "quiet: no status line");
    assert_eq!(
        Kco::new(dir.path()).arg("validate").run().code,
        0,
        "re-sealed"
    );

    let src = dir.path().join("snapshots/a/file-src.yaml");
    let broken = std::fs::read_to_string(&src)
        .unwrap()
        .replace("offsets:\n", "offsets: [\n");
    std::fs::write(&src, &broken).unwrap();
    let r = Kco::new(dir.path()).args(["fmt", "-q"]).run();
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("invalid:"), "{}", r.stdout);
}
