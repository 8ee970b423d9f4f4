//! Every entry of the built-in table: a good offset fits; each kind of bad one (an unknown
//! key, a missing required key, a wrong type, a negative position) is named.

use serde_json::{json, Value};

use super::check::{check_entry, Section};
use super::*;
use crate::model::ConnectorType;
use crate::model::OffsetEntry;

fn entry(partition: Value, offset: Value) -> OffsetEntry {
    serde_json::from_value(json!({"partition": partition, "offset": offset})).unwrap()
}

fn source(class: &str) -> &'static Shape {
    Shapes::builtin()
        .find(ConnectorType::Source, Some(class))
        .unwrap_or_else(|| panic!("{class} is in the table"))
}

/// A good partition and offset of each entry, as the connector writes them (values seen on
/// the test bed where it runs the connector; otherwise read from the cited source).
fn good() -> Vec<(&'static Shape, Value, Value)> {
    let sink = Shapes::builtin().find(ConnectorType::Sink, None).unwrap();
    let jdbc_offset =
        json!({"incrementing": 42, "timestamp": 1764441689000_i64, "timestamp_nanos": 123000000});
    vec![
        (
            sink,
            json!({"kafka_topic": "orders", "kafka_partition": 0}),
            json!({"kafka_offset": 100}),
        ),
        (
            source("org.apache.kafka.connect.file.FileStreamSourceConnector"),
            json!({"filename": "/tmp/in.txt"}),
            json!({"position": 1024}),
        ),
        (
            source("org.apache.kafka.connect.mirror.MirrorSourceConnector"),
            json!({"cluster": "east", "topic": "orders", "partition": 3}),
            json!({"offset": 99}),
        ),
        (
            source("org.apache.kafka.connect.mirror.MirrorCheckpointConnector"),
            json!({"group": "g", "topic": "east.orders", "partition": 0}),
            json!({"offset": 7}),
        ),
        (
            source("org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"),
            json!({"sourceClusterAlias": "east", "targetClusterAlias": "west"}),
            json!({"offset": 0}),
        ),
        (
            source("io.debezium.connector.postgresql.PostgresConnector"),
            json!({"server": "pg"}),
            json!({"lsn": 23803720, "lsn_proc": 23803720, "lsn_commit": 23803400, "txId": 745,
                   "ts_usec": 1764441689123456_i64, "messageType": "INSERT",
                   "transaction_id": null, "transaction_data_collection_order_public.t": 2}),
        ),
        (
            source("io.debezium.connector.mysql.MySqlConnector"),
            json!({"server": "db"}),
            json!({"file": "mysql-bin.000003", "pos": 154, "row": 1, "event": 2,
                   "gtids": "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", "server_id": 223344,
                   "ts_sec": 1764441689}),
        ),
        (
            source("io.debezium.connector.mariadb.MariaDbConnector"),
            json!({"server": "db"}),
            json!({"file": "mariadb-bin.000001", "pos": "4", "ts_sec": 1764441689, "snapshot": "INITIAL"}),
        ),
        (
            source("io.debezium.connector.sqlserver.SqlServerConnector"),
            json!({"server": "mssql", "database": "inventory"}),
            json!({"commit_lsn": "0000002a:00000dc0:0003", "change_lsn": "NULL", "event_serial_no": 1}),
        ),
        (
            source("io.debezium.connector.oracle.OracleConnector"),
            json!({"server": "ora"}),
            json!({"scn": "2813624", "commit_scn": "2813624:1:0a001a00ae030000:1", "txId": "0a001a00ae030000", "txSeq": 3}),
        ),
        (
            source("io.debezium.connector.mongodb.MongoDbConnector"),
            json!({"server_id": "mongo", "rs": "rs0"}),
            json!({"sec": 1764441689, "ord": 2, "resume_token": "8263..."}),
        ),
        (
            source("io.confluent.connect.jdbc.JdbcSourceConnector"),
            json!({"protocol": "1", "table": "db.public.orders"}),
            jdbc_offset.clone(),
        ),
        (
            source("io.aiven.connect.jdbc.JdbcSourceConnector"),
            json!({"query": "query"}),
            jdbc_offset,
        ),
    ]
}

#[test]
fn the_builtin_table_parses_and_covers_the_issue_classes() {
    let shapes = Shapes::builtin();
    assert_eq!(
        good().len(),
        shapes.entries().len(),
        "one good case per entry"
    );
    for s in shapes.entries() {
        assert!(
            s.source.starts_with("https://"),
            "{} cites its source",
            s.title
        );
    }
}

#[test]
fn a_good_offset_of_every_entry_fits() {
    for (shape, p, o) in good() {
        let misfits = check_entry(shape, &entry(p.clone(), o.clone()));
        assert!(misfits.is_empty(), "{}: {p} {o}: {misfits:?}", shape.title);
    }
}

/// The first required offset key of a shape, or the first of `offsetAnyOf`.
fn required_key(shape: &Shape) -> Option<String> {
    shape
        .offset
        .iter()
        .find(|(_, s)| s.required)
        .map(|(k, _)| k.clone())
        .or_else(|| shape.offset_any_of.first().cloned())
}

#[test]
fn every_entry_names_an_unknown_key_with_the_intended_one() {
    let mut tested = 0;
    for (shape, p, o) in good() {
        let key = o
            .as_object()
            .unwrap()
            .keys()
            .find(|k| k.len() >= 3)
            .cloned()
            .unwrap_or_else(|| panic!("{}: a key to misspell", shape.title));
        // A one-letter typo: the last two letters swapped.
        let mut typo: Vec<char> = key.chars().collect();
        let n = typo.len();
        typo.swap(n - 1, n - 2);
        let typo: String = typo.into_iter().collect();
        assert!(
            typo != key && !shape.offset.contains_key(&typo),
            "{}: `{typo}` is no typo",
            shape.title
        );
        tested += 1;
        let mut offset = o.as_object().unwrap().clone();
        let v = offset.remove(&key).unwrap();
        offset.insert(typo.clone(), v);
        let misfits = check_entry(shape, &entry(p, Value::Object(offset)));
        let unknown = misfits
            .iter()
            .find(|m| m.key.as_deref() == Some(typo.as_str()))
            .unwrap_or_else(|| panic!("{}: `{typo}` is unknown: {misfits:?}", shape.title));
        assert_eq!(unknown.section, Section::Offset);
        assert!(
            unknown.message.contains(&format!("did you mean `{key}`")),
            "{}: {}",
            shape.title,
            unknown.message
        );
    }
    assert_eq!(tested, Shapes::builtin().entries().len(), "every entry");
}

#[test]
fn every_entry_names_a_missing_required_key() {
    for (shape, p, o) in good() {
        let Some(key) = required_key(shape) else {
            continue;
        };
        let mut offset = o.as_object().unwrap().clone();
        offset.remove(&key);
        for k in &shape.offset_any_of {
            offset.remove(k);
        }
        let misfits = check_entry(shape, &entry(p, Value::Object(offset)));
        assert!(
            misfits
                .iter()
                .any(|m| m.key.is_none() && m.message.contains(&format!("`{key}`"))),
            "{}: missing `{key}`: {misfits:?}",
            shape.title
        );
    }
    // A partition key too.
    let sink = Shapes::builtin().find(ConnectorType::Sink, None).unwrap();
    let m = check_entry(
        sink,
        &entry(json!({"kafka_topic": "t"}), json!({"kafka_offset": 1})),
    );
    assert!(
        m[0].message.contains("partition lacks `kafka_partition`"),
        "{m:?}"
    );
    // One of a pair.
    let jdbc = source("io.confluent.connect.jdbc.JdbcSourceConnector");
    let m = check_entry(
        jdbc,
        &entry(json!({"protocol": "1"}), json!({"incrementing": 1})),
    );
    assert!(m[0].message.contains("one of `table`, `query`"), "{m:?}");
}

#[test]
fn every_entry_names_a_wrong_type_and_a_negative_position() {
    for (shape, p, o) in good() {
        let Some(key) = required_key(shape).or_else(|| shape.order.first().cloned()) else {
            continue;
        };
        let spec = &shape.offset[&key];
        let mut offset = o.as_object().unwrap().clone();
        // A boolean where the shape wants no boolean.
        offset.insert(key.clone(), json!(true));
        if !spec.types.list().contains(&ValueType::Boolean) {
            let misfits = check_entry(shape, &entry(p.clone(), Value::Object(offset.clone())));
            assert!(
                misfits
                    .iter()
                    .any(|m| m.key.as_deref() == Some(key.as_str())
                        && m.message.contains("expected")),
                "{}: `{key}: true`: {misfits:?}",
                shape.title
            );
        }
        if spec.min == Some(0) {
            offset.insert(key.clone(), json!(-5));
            let misfits = check_entry(shape, &entry(p, Value::Object(offset)));
            assert!(
                misfits.iter().any(|m| m.message.contains("must be >= 0")),
                "{}: `{key}: -5`: {misfits:?}",
                shape.title
            );
        }
    }
}

#[test]
fn the_postgres_edits_of_the_issue_are_named() {
    let pg = source("io.debezium.connector.postgresql.PostgresConnector");
    let p = json!({"server": "pg"});
    let lns = check_entry(pg, &entry(p.clone(), json!({"lns": 23803720, "txId": 745})));
    let text: Vec<&str> = lns.iter().map(|m| m.message.as_str()).collect();
    assert_eq!(
        text,
        [
            "unknown offset key `lns`: Debezium PostgreSQL does not write it (did you mean `lsn`?)",
            "offset lacks `lsn` (integer >= 0), which Debezium PostgreSQL needs"
        ]
    );
    let string = check_entry(pg, &entry(p.clone(), json!({"lsn": "not-a-number"})));
    assert_eq!(
        string[0].message,
        "offset `lsn` is the string \"not-a-number\": expected integer >= 0"
    );
    let negative = check_entry(pg, &entry(p, json!({"lsn": -1})));
    assert_eq!(negative[0].message, "offset `lsn` is -1: it must be >= 0");
}

#[test]
fn readable_positions() {
    let pg = source("io.debezium.connector.postgresql.PostgresConnector");
    let o = |v: Value| -> crate::model::Fields { v.as_object().unwrap().clone().into() };
    assert_eq!(
        pg.readable(&o(
            json!({"lsn": 23803720, "ts_usec": 1764441689123456_i64})
        ))
        .unwrap(),
        "0/16B3748, 2025-11-29T18:41:29.123456Z"
    );
    assert_eq!(
        pg.readable(&o(json!({"lsn": 0x1_0000_00FF_i64}))).unwrap(),
        "1/FF"
    );
    let mysql = source("io.debezium.connector.mysql.MySqlConnector");
    assert_eq!(
        mysql
            .readable(&o(
                json!({"file": "mysql-bin.000003", "pos": 154, "ts_sec": 1764441689})
            ))
            .unwrap(),
        "mysql-bin.000003:154, 2025-11-29T18:41:29Z"
    );
    let file = source("org.apache.kafka.connect.file.FileStreamSourceConnector");
    assert!(file.readable(&o(json!({"position": 1}))).is_none());
}

#[test]
fn every_ordered_entry_orders_its_offsets() {
    use std::cmp::Ordering;
    let o = |v: Value| -> crate::model::Fields { v.as_object().unwrap().clone().into() };
    let mysql = source("io.debezium.connector.mysql.MySqlConnector");
    let (a, b) = (
        o(json!({"file": "mysql-bin.000009", "pos": 900})),
        o(json!({"file": "mysql-bin.000010", "pos": "4"})),
    );
    assert_eq!(
        order::compare(mysql, &a, &b),
        Some((Ordering::Greater, None))
    );
    let sql = source("io.debezium.connector.sqlserver.SqlServerConnector");
    let (a, b) = (
        o(
            json!({"commit_lsn": "0000002a:00000dc0:0003", "change_lsn": "NULL", "event_serial_no": 1}),
        ),
        o(
            json!({"commit_lsn": "0000002a:00000dc0:0003", "change_lsn": "NULL", "event_serial_no": 4}),
        ),
    );
    assert_eq!(
        order::compare(sql, &a, &b),
        Some((Ordering::Greater, Some(3)))
    );
    let oracle = source("io.debezium.connector.oracle.OracleConnector");
    assert_eq!(
        order::compare(
            oracle,
            &o(json!({"scn": "2813624"})),
            &o(json!({"scn": "999"}))
        ),
        Some((Ordering::Less, Some(2812625)))
    );
    let mongo = source("io.debezium.connector.mongodb.MongoDbConnector");
    assert_eq!(
        order::compare(
            mongo,
            &o(json!({"sec": 10, "ord": 2})),
            &o(json!({"sec": 10, "ord": 1}))
        ),
        Some((Ordering::Less, None))
    );
    let jdbc = source("io.aiven.connect.jdbc.JdbcSourceConnector");
    assert_eq!(
        order::compare(
            jdbc,
            &o(json!({"timestamp": 5, "timestamp_nanos": 0, "incrementing": 9})),
            &o(json!({"timestamp": 5, "timestamp_nanos": 0, "incrementing": 12}))
        ),
        Some((Ordering::Greater, Some(3)))
    );
    // Every shape with an order orders its own good offset against a changed copy.
    for (shape, _, o1) in good() {
        if shape.order.is_empty() {
            continue;
        }
        let a = o(o1.clone());
        assert_eq!(order::compare(shape, &a, &a), None, "{}", shape.title);
    }
}

#[test]
fn user_entries_override_and_extend_the_table() {
    let text = "apiVersion: kco/v1\nkind: OffsetShapes\nshapes:\n  - class: com.example.Src\n    title: Example\n    source: https://example.com/Src.java\n    partition:\n      shard: {type: integer, required: true}\n    offset:\n      seq: {type: integer, required: true, min: 0}\n    order: [seq]\n    unit: events\n";
    let user = parse_table(text).unwrap();
    let shapes = Shapes::with_user(user);
    assert_eq!(
        shapes.entries().len(),
        Shapes::builtin().entries().len() + 1
    );
    assert_eq!(
        shapes
            .find(ConnectorType::Source, Some("com.example.Src"))
            .unwrap()
            .title,
        "Example"
    );
    let bad = text.replace("order: [seq]", "order: [sequence]");
    let e = parse_table(&bad).unwrap_err();
    assert!(e.message.contains("`order` names `sequence`"), "{e}");
    assert_eq!(e.line, Some(4));
    let typo = text.replace("required: true, min", "requird: true, min");
    let e = parse_table(&typo).unwrap_err();
    assert!(e.message.contains("unknown field `requird`"), "{e}");
    assert_eq!(e.line, Some(10));
}

#[test]
fn the_table_is_the_one_documented() {
    // docs/shapes.md lists every class of the table.
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/shapes.md"),
    )
    .unwrap();
    for s in Shapes::builtin().entries() {
        if let Some(c) = &s.class {
            assert!(doc.contains(c.as_str()), "docs/shapes.md names {c}");
        }
    }
}

#[test]
fn lines_point_at_the_key() {
    let text = "# x\napiVersion: kco/v1\nkind: ConnectorOffsets\nmetadata:\n  name: c\n  cluster: a\n  type: source\noffsets:\n- partition:\n    server: pg\n  offset:\n    lns: 5\n    txId: 1\n- partition:\n    server: pg2\n  offset:\n    lsn: 1\nchecksum: x\n";
    use crate::model::file::entry_line;
    assert_eq!(entry_line(text, 0, "offset", Some("lns")), Some(12));
    assert_eq!(entry_line(text, 0, "offset", None), Some(11));
    assert_eq!(entry_line(text, 1, "partition", Some("server")), Some(15));
    assert_eq!(entry_line(text, 1, "offset", Some("lsn")), Some(17));
}
