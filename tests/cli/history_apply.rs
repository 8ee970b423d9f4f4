//! `kco apply --at`, `--changed-since` and `--fail-on` on the generated history of
//! `history.rs`, against the fake Connect.

use kco::model::ConnectorType::Sink;

use crate::history::{apply, apply_unreachable, fake_at_head, history, orders};
use crate::support::git::git_at;
use crate::support::json::parse_json;

#[test]
fn apply_at_a_time_restores_that_commit_without_touching_the_working_tree() {
    let (r, c) = history();
    let fake = fake_at_head();
    let before = std::fs::read_to_string(r.path().join("snapshots/a/orders.yaml")).unwrap();
    let (code, out, err) = apply(&r, &fake, &["--at", "2026-11-29 12:00", "--yes"]);
    assert_eq!(code, 0, "{out}{err}");
    let short = &c[2][..12];
    assert!(
        out.starts_with(&format!(
            "Files as of `2026-11-29 12:00`: commit {short} 2026-11-29 02:00 \"bad rewind\"\n"
        )),
        "{out}"
    );
    // The hand-made rewind of that commit was never applied (no apply record covers it):
    // orders is taken as the cluster had it, from nightly 2.
    assert!(
        out.contains(&format!(
            "  snapshots/a/orders.yaml   last changed by {} 2026-11-28 02:00 \"nightly 2\"; passed over 1 change not applied by then ({short})",
            &c[1][..12]
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "  snapshots/a/billing.yaml  last changed by {} 2026-11-27 02:00 \"nightly 1\"",
            &c[0][..12]
        )),
        "{out}"
    );
    assert_eq!(fake.offsets("orders")[0]["offset"]["kafka_offset"], 200);
    assert_eq!(fake.offsets("orders")[1]["offset"]["kafka_offset"], 80);
    assert_eq!(fake.offsets("billing")[0]["offset"]["position"], 10);
    assert_eq!(
        std::fs::read_to_string(r.path().join("snapshots/a/orders.yaml")).unwrap(),
        before
    );

    fake.remove_connector("legacy");
    let (code, out, _) = apply(&r, &fake, &["--at", "HEAD~3", "--dry-run", "-o", "json"]);
    assert_eq!(code, 1, "legacy is no longer on the cluster: {out}");
    let v = parse_json(&out);
    assert_eq!(v["source"]["mode"], "at");
    assert_eq!(v["source"]["revision"]["commit"], c[1].as_str());
    let files: Vec<&str> = v["source"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        vec![
            "snapshots/a/billing.yaml",
            "snapshots/a/legacy.yaml",
            "snapshots/a/orders.yaml"
        ]
    );
    // With no path, the cluster's directory, as `diff --base` takes it: the same plan.
    let (code, bare, _) = r
        .on(
            &fake,
            &["apply", "--at", "HEAD~3", "--dry-run", "-o", "json"],
        )
        .parts();
    assert_eq!(code, 1, "{bare}");
    assert_eq!(parse_json(&bare)["source"], v["source"]);
    assert_eq!(parse_json(&bare)["plan"], v["plan"]);
}

#[test]
fn changed_since_applies_only_what_changed_and_fail_on_refuses_before_any_change() {
    let (r, c) = history();
    let fake = fake_at_head();
    // Since nightly 2: orders (rewound, then fixed), billing (moved, 30), newbie (added);
    // legacy was removed: not applied.
    let (code, out, err) = apply(&r, &fake, &["--changed-since", "HEAD~1", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("Changes since `HEAD~1` (commit {} 2026-11-30 02:00 \"move billing\"): 1 of 3 connectors; the others are left alone\n  snapshots/a/orders.yaml  1 partition set; changed by {} 2026-12-01 02:00 \"merge fix\"\n  left alone (unchanged): billing, newbie\n", &c[3][..12], &c[4][..12])), "{out}");
    fake.clear_requests();
    // The fix moved orders/0 forward (120 -> 300) and live is already past it (900): a
    // forward change never moves a partition back, so nothing rewinds.
    let (code, out, err) = apply(
        &r,
        &fake,
        &[
            "--changed-since",
            "HEAD~1",
            "--fail-on",
            "reprocessing",
            "--yes",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("orders/0: live {\"kafka_offset\":900}, the change set {\"kafka_offset\":300}: left where it is: live is already past the change's target (a forward change)"),
        "{out}"
    );
    fake.assert_no_mutations();
    let (code, _, err) = apply(
        &r,
        &fake,
        &[
            "--changed-since",
            "HEAD~1",
            "--fail-on",
            "data-loss,reset",
            "--yes",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(fake.offsets("orders")[0]["offset"]["kafka_offset"], 900);
    assert_eq!(fake.offsets("billing")[0]["offset"]["position"], 30);
    // Uncommitted edits count, and name no commit.
    r.write("snapshots/a/newbie.yaml", "newbie", Sink, orders(&[(2, 9)]));
    let (code, out, err) = apply(
        &r,
        &fake,
        &[
            "--changed-since",
            "HEAD",
            "--fail-on",
            "data-loss",
            "--dry-run",
        ],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "snapshots/a/newbie.yaml  1 partition set; changed in the working tree (not committed)"
        ),
        "{out}"
    );
    assert!(
        err.contains("newbie orders/2: [DATA LOSS] at most 4 records will be skipped (data loss)"),
        "{err}"
    );
    // Since HEAD with nothing changed: nothing to do, no cluster needed.
    git_at(
        r.path(),
        "2026-12-03T00:00:00Z",
        &["checkout", "-q", "--", "."],
    );
    let (code, out, _) = apply_unreachable(&r, &["--changed-since", "HEAD"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.ends_with("No changes.\n"), "{out}");
}
