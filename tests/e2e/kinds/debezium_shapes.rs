//! Debezium PostgreSQL against its offset shape (schemas/shapes.yaml), on the real connector:
//! the offsets it writes fit the shape; the hand edits Connect and Debezium both accept
//! (`lsn` renamed, `lsn` a string, `lsn` removed) are refused by `validate`, `fmt`, `diff
//! --base`-free `apply` with the file's line and the expected shape, and nothing reaches the
//! worker; an earlier LSN applies, and the connector delivers the rows after it again.

use serde_json::{json, Value};

use super::debezium::{capture, changes, expected, psql, psql_output, Capture};
use super::{on_a, snapshot_of};
use crate::harness::{temp_dir, testbed, wait_for, WAIT};
use crate::kco_steps::set_offsets;

/// The offset keys that carry Debezium PostgreSQL's position.
const LSN_KEYS: [&str; 3] = ["lsn", "lsn_proc", "lsn_commit"];

#[test]
fn debezium_postgres_offsets_fit_their_shape_and_misfits_never_reach_the_worker() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let work = temp_dir();
    // The slot keeps the WAL from where the connector started, so that a rewind to an
    // earlier LSN finds it (a connector that flushes gives the WAL up).
    let keep_wal = json!({"flush.lsn.source": "false"});
    let Some(Capture {
        pg,
        slot,
        table,
        name,
        reader,
        connector: dbz,
    }) = capture(&tb, &a, work.path(), "kco_e2e_shape", 1, keep_wal)
    else {
        return;
    };
    let env = on_a(&tb);
    assert_eq!(changes(&reader.wait_lines(1)), expected(&[(1, "r")]));
    psql(pg, &format!("INSERT INTO {table} VALUES (2, 'row-2')"));
    assert_eq!(
        changes(&reader.wait_lines(2)),
        expected(&[(1, "r"), (2, "c")])
    );
    let streamed = |o: &[Value]| o.len() == 1 && o[0]["offset"].get("snapshot").is_none();
    let earlier = a.wait_offsets(&name, "offsets past row 2", streamed);
    psql(
        pg,
        &format!("INSERT INTO {table} VALUES (3, 'row-3'), (4, 'row-4')"),
    );
    let later_rows = expected(&[(1, "r"), (2, "c"), (3, "c"), (4, "c")]);
    assert_eq!(changes(&reader.wait_lines(4)), later_rows);
    let earlier_lsn = earlier[0]["offset"]["lsn"].as_i64().unwrap();
    a.wait_offsets(&name, "offsets past row 4", |o| {
        streamed(o) && o[0]["offset"]["lsn"].as_i64() > Some(earlier_lsn)
    });
    a.stop(&name);
    let live = a.offsets(&name);
    let file = snapshot_of(&env, &name);
    let f = file.to_str().unwrap();

    // What the real connector writes fits the table's shape.
    let (code, out, err) = env.kco(&["validate", f]).parts();
    assert_eq!(code, 0, "the connector's own offsets fit: {out}{err}");
    assert!(!err.contains("not checked"), "{err}");

    // Three hand edits, each sealed (as a kco without shapes would have sealed them).
    let edit = |change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut offsets = live.clone();
        change(offsets[0]["offset"].as_object_mut().unwrap());
        set_offsets(&file, offsets);
    };
    type Edit = Box<dyn Fn(&mut serde_json::Map<String, Value>)>;
    let cases: [(&str, Edit, &str); 3] = [
        (
            "lsn renamed",
            Box::new(|o| {
                let v = o.remove("lsn").unwrap();
                o.insert("lns".into(), v);
            }),
            "unknown offset key `lns`: Debezium PostgreSQL does not write it (did you mean `lsn`?)",
        ),
        (
            "lsn a string",
            Box::new(|o| {
                o.insert("lsn".into(), json!("not-a-number"));
            }),
            "offset `lsn` is the string \"not-a-number\": expected integer >= 0",
        ),
        (
            "lsn removed",
            Box::new(|o| {
                o.remove("lsn");
            }),
            "offset lacks `lsn` (integer >= 0), which Debezium PostgreSQL needs",
        ),
    ];
    for (what, change, message) in &cases {
        edit(change.as_ref());
        let text = std::fs::read_to_string(&file).unwrap();
        let (code, out, err) = env.kco(&["validate", f]).parts();
        assert_eq!(code, 1, "{what}: validate refuses: {out}{err}");
        let line = out
            .lines()
            .find(|l| l.contains(message))
            .unwrap_or_else(|| panic!("{what}: `{message}` in {out}"));
        assert!(
            line.contains("expected (io.debezium.connector.postgresql.PostgresConnector): {server: string} -> {lsn: integer >= 0"),
            "{what}: the expected shape: {line}"
        );
        // The line named is the offending key's, or the offset's when the key is gone.
        // `invalid: <file>:<line>: ...`
        let n: usize = line
            .split(':')
            .nth(2)
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{what}: file:line in {line}"));
        let at = text.lines().nth(n - 1).unwrap().trim();
        assert!(
            at.starts_with("lns:") || at.starts_with("lsn:") || at == "offset:",
            "{what}: line {n} is `{at}`"
        );
        let (code, out, err) = env.kco(&["fmt", f]).parts();
        assert_eq!(code, 1, "{what}: fmt refuses: {out}{err}");
        let (code, out, err) = env.kco(&["-v", "apply", f, "--yes"]).parts();
        assert_eq!(code, 1, "{what}: apply refuses: {out}{err}");
        assert!(err.contains(message), "{what}: {err}");
        assert!(
            !err.contains("PATCH") && !err.contains("PUT") && !err.contains("POST"),
            "{what}: no mutating request was traced: {err}"
        );
        assert_eq!(
            a.offsets(&name),
            live,
            "{what}: the worker's offsets are untouched"
        );
        assert_eq!(a.state(&name), "STOPPED", "{what}");
    }

    // A correct hand edit: the position of row 2 (an earlier LSN). It applies, and the
    // connector delivers rows 3 and 4 again.
    edit(&|o| {
        for k in LSN_KEYS {
            if let Some(v) = earlier[0]["offset"].get(k) {
                o.insert(k.into(), v.clone());
            }
        }
    });
    let (code, out, err) = env.kco(&["validate", f]).parts();
    assert_eq!(code, 0, "an earlier LSN fits: {out}{err}");
    let (code, out, err) = env.kco(&["apply", f, "--yes"]).parts();
    assert_eq!(code, 0, "apply: {out}{err}");
    // The plan shows the LSNs as PostgreSQL does, beside the raw values.
    let pg_lsn = |n: i64| format!("{:X}/{:X}", n >> 32, n & 0xFFFF_FFFF);
    assert!(
        out.contains(&pg_lsn(earlier_lsn)),
        "readable LSN in the plan: {out}"
    );
    let applied = a.offsets(&name);
    assert_eq!(applied[0]["offset"]["lsn"], earlier[0]["offset"]["lsn"]);
    a.resume(&name);
    let again = expected(&[(1, "r"), (2, "c"), (3, "c"), (4, "c"), (3, "c"), (4, "c")]);
    wait_for("rows 3 and 4 delivered again", WAIT, || {
        let got = changes(&reader.lines());
        (got.len() >= 6).then_some(()).ok_or(format!("{got:?}"))
    });
    assert_eq!(changes(&reader.wait_lines_settled(6)), again);
    drop(dbz);
    a.wait_gone(&name);
    // The slot keeps WAL while it exists: give it up once the connector is gone.
    wait_for("the replication slot dropped", WAIT, || {
        let out = psql_output(
            pg,
            &format!(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '{slot}'"
            ),
        )
        .map_err(|e| e.to_string())?;
        out.status
            .success()
            .then_some(())
            .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
    });
}
