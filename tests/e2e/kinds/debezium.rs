//! Debezium's PostgreSQL connector (change data capture) against the test bed's
//! PostgreSQL: its offsets mix numbers (`lsn`, `txId`, `ts_usec`), strings and booleans;
//! restored after a reset, they make Debezium resume where it was, with no new initial
//! snapshot.

use std::io;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use super::{apply_converged, diff_that_differs, on_a, snapshot_of};
use crate::harness::{
    output_text, skip_unless_required, temp_dir, testbed, unique_name, wait_for, Connect,
    ConnectorGuard, Testbed, TopicReader, WAIT,
};

const POSTGRES: &str = "io.debezium.connector.postgresql.PostgresConnector";

/// Runs SQL with psql as the test bed's `kco` user: its output.
pub(super) fn psql_output(port: u16, sql: &str) -> io::Result<Output> {
    Command::new("psql")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "kco"])
        .args(["-d", "kco", "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        .env("PGPASSWORD", "kco")
        .output()
}

/// Runs SQL with psql as the test bed's `kco` user; panics with psql's output on failure.
pub(super) fn psql(port: u16, sql: &str) {
    let out = psql_output(port, sql).unwrap_or_else(|e| {
        panic!("run psql (PostgreSQL client; scripts/local-connect.sh installs it): {e}")
    });
    assert!(out.status.success(), "psql {sql}: {}", output_text(&out));
}

/// A Debezium PostgreSQL connector on cluster a, running, that captures a new table of its
/// own (`id int PRIMARY KEY, name text`), and what reaches its topic: the values flattened
/// to `{id=.., name=.., __op=..}` lines.
pub(super) struct Capture {
    pub pg: u16,
    /// The connector's replication slot, and the table's name after `t_`.
    pub slot: String,
    pub table: String,
    pub name: String,
    /// Deleted when dropped, before the reader.
    pub connector: ConnectorGuard,
    pub reader: TopicReader,
}

/// The test bed's PostgreSQL when it answers; else the test skips (`None`), or fails under
/// `KCO_E2E=required`.
fn postgres(tb: &Testbed) -> Option<u16> {
    let pg = tb.pg_port();
    if std::net::TcpStream::connect(("127.0.0.1", pg)).is_ok() {
        return Some(pg);
    }
    skip_unless_required(
        "KCO_E2E",
        &format!(
            "PostgreSQL is not reachable at 127.0.0.1:{pg} (KCO_E2E_PG_PORT); \
             scripts/local-connect.sh up starts it unless KCO_TESTBED_POSTGRES=0"
        ),
    );
    None
}

/// A [`Capture`] named after `stem` (`kco_e2e_dbz`: slot `kco_e2e_dbz_...`, connector
/// `kco-e2e-dbz-...`) of a table holding rows 1..=`rows` (`row-1`, ...) before it starts,
/// with `extra` added to the connector's config; its records read into `work`. `None` when
/// PostgreSQL is not there (see [`postgres`]).
pub(super) fn capture(
    tb: &Testbed,
    a: &Connect,
    work: &Path,
    stem: &str,
    rows: i64,
    extra: Value,
) -> Option<Capture> {
    let pg = postgres(tb)?;
    let slot = unique_name(stem).replace('-', "_");
    let table = format!("t_{slot}");
    psql(
        pg,
        &format!("CREATE TABLE {table} (id int PRIMARY KEY, name text)"),
    );
    psql(
        pg,
        &format!("INSERT INTO {table} SELECT i, 'row-' || i FROM generate_series(1, {rows}) i"),
    );
    let prefix = slot.replace('_', "-");
    let reader = TopicReader::start(a, &format!("{prefix}.public.{table}"), work);
    let name = unique_name(&stem.replace('_', "-"));
    let mut config = json!({
        "connector.class": POSTGRES,
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": pg.to_string(),
        "database.user": "kco",
        "database.password": "kco",
        "database.dbname": "kco",
        "topic.prefix": prefix,
        "plugin.name": "pgoutput",
        "slot.name": slot,
        "publication.name": format!("pub_{slot}"),
        "publication.autocreate.mode": "filtered",
        "table.include.list": format!("public.{table}"),
        "snapshot.mode": "initial",
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.add.fields": "op",
    });
    for (k, v) in extra.as_object().expect("extra config: an object") {
        config[k] = v.clone();
    }
    let connector = a.create(&name, config);
    a.wait_running(&name);
    Some(Capture {
        pg,
        slot,
        table,
        name,
        connector,
        reader,
    })
}

/// `(id, op)` of each change record, as the FileStreamSink wrote the flattened values
/// (`{id=4, name=row-4, __op=c}`, in any key order).
pub(super) fn changes(lines: &[String]) -> Vec<(i64, String)> {
    lines
        .iter()
        .map(|l| {
            let field = |key: &str| {
                l.trim_matches(|c| c == '{' || c == '}')
                    .split(", ")
                    .find_map(|kv| kv.strip_prefix(key))
                    .unwrap_or_else(|| panic!("no {key} in {l}"))
                    .to_string()
            };
            (field("id=").parse().expect("id"), field("__op="))
        })
        .collect()
}

pub(super) fn expected(ops: &[(i64, &str)]) -> Vec<(i64, String)> {
    ops.iter().map(|(i, o)| (*i, o.to_string())).collect()
}

#[test]
fn debezium_postgres_restore_resumes_without_a_new_snapshot() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let work = temp_dir();
    let Some(Capture {
        pg,
        table,
        name,
        reader,
        connector: _dbz,
        ..
    }) = capture(&tb, &a, work.path(), "kco_e2e_dbz", 3, json!({}))
    else {
        return;
    };
    let env = on_a(&tb);
    let snap = expected(&[(1, "r"), (2, "r"), (3, "r")]);
    assert_eq!(changes(&reader.wait_lines(3)), snap, "the initial snapshot");
    let after_snapshot = a.wait_offsets(&name, "the snapshot's offsets", |o| !o.is_empty());
    let first = &after_snapshot[0]["offset"];
    assert!(first["lsn"].is_i64(), "lsn is a number: {first}");
    assert!(first["txId"].is_i64(), "txId is a number: {first}");
    assert!(first["ts_usec"].is_i64(), "ts_usec is a number: {first}");
    assert!(
        first["last_snapshot_record"].is_boolean(),
        "a boolean: {first}"
    );

    psql(
        pg,
        &format!("INSERT INTO {table} VALUES (4, 'row-4'), (5, 'row-5')"),
    );
    let streamed = expected(&[(1, "r"), (2, "r"), (3, "r"), (4, "c"), (5, "c")]);
    assert_eq!(changes(&reader.wait_lines(5)), streamed);
    let live = a.wait_offsets(&name, "offsets past the snapshot", |o| {
        o.len() == 1
            && o[0]["offset"]["lsn"] != first["lsn"]
            && o[0]["offset"].get("snapshot").is_none()
    });
    let file = snapshot_of(&env, &name);

    // Offsets lost (kco reset of a stopped connector) while rows 6 and 7 arrive.
    a.stop(&name);
    psql(
        pg,
        &format!("INSERT INTO {table} VALUES (6, 'row-6'), (7, 'row-7')"),
    );
    let (code, out, err) = env.kco(&["reset", &name, "--yes"]).parts();
    assert_eq!(code, 0, "kco reset: {out}{err}");
    a.wait_offsets(&name, "no offsets after the reset", <[Value]>::is_empty);
    diff_that_differs(&env, &name);

    apply_converged(&env, &file);
    assert_eq!(a.state(&name), "STOPPED", "apply puts the prior state back");
    assert_eq!(
        a.wait_offsets(&name, "the restored offsets", |o| o == live.as_slice()),
        live,
        "numbers, strings and booleans come back as they were"
    );
    a.resume(&name);
    let all = expected(&[
        (1, "r"),
        (2, "r"),
        (3, "r"),
        (4, "c"),
        (5, "c"),
        (6, "c"),
        (7, "c"),
    ]);
    wait_for("rows 6 and 7 streamed", WAIT, || {
        let got = changes(&reader.lines());
        (got.len() >= 7).then_some(()).ok_or(format!("{got:?}"))
    });
    let settled = changes(&reader.wait_lines_settled(7));
    assert_eq!(
        settled, all,
        "resumed from the restored position: no new snapshot (no second r records)"
    );
}
