//! Endpoint shapes, versions, connector lifecycle and plugins.

use super::*;

#[test]
fn root_reports_version_commit_and_cluster_id() {
    let fake = FakeConnect::builder()
        .version("3.9.1")
        .kafka_cluster_id("kc-1")
        .commit("abc")
        .start();
    let expected = json!({ "version": "3.9.1", "commit": "abc", "kafka_cluster_id": "kc-1" });
    assert_eq!(call(&fake, "GET", "/", None), (200, expected));
}

#[test]
fn list_and_expand_have_connect_shapes() {
    let fake = FakeConnect::builder()
        .connector(
            ConnectorSpec::source("pg", PG)
                .tasks(2)
                .config("database.hostname", "db"),
        )
        .sink("s3", S3, State::Stopped, json!([]))
        .start();
    let worker = fake.addr().to_string();
    assert_eq!(
        call(&fake, "GET", "/connectors", None),
        (200, json!(["pg", "s3"]))
    );
    let (status, body) = call(&fake, "GET", "/connectors?expand=status&expand=info", None);
    assert_eq!(status, 200);
    let expected = json!({
        "pg": {
            "status": {
                "name": "pg",
                "connector": { "state": "RUNNING", "worker_id": worker },
                "tasks": [
                    { "id": 0, "state": "RUNNING", "worker_id": worker },
                    { "id": 1, "state": "RUNNING", "worker_id": worker },
                ],
                "type": "source",
            },
            "info": {
                "name": "pg",
                "config": { "connector.class": PG, "database.hostname": "db", "name": "pg", "tasks.max": "2" },
                "tasks": [ { "connector": "pg", "task": 0 }, { "connector": "pg", "task": 1 } ],
                "type": "source",
            },
        },
        "s3": {
            "status": {
                "name": "s3",
                "connector": { "state": "STOPPED", "worker_id": worker },
                "tasks": [],
                "type": "sink",
            },
            "info": {
                "name": "s3",
                "config": { "connector.class": S3, "name": "s3", "tasks.max": "1" },
                "tasks": [],
                "type": "sink",
            },
        },
    });
    assert_eq!(body, expected);
    let (_, only_status) = call(&fake, "GET", "/connectors?expand=status", None);
    assert_eq!(
        only_status["s3"],
        json!({ "status": expected["s3"]["status"] })
    );
    assert_eq!(
        call(&fake, "GET", "/connectors/pg", None),
        (200, expected["pg"]["info"].clone())
    );
    assert_eq!(
        call(&fake, "GET", "/connectors/pg/status", None),
        (200, expected["pg"]["status"].clone())
    );
}

#[test]
fn unknown_connector_is_404_with_connect_error_body() {
    let fake = FakeConnect::start();
    let missing = err(404, "Connector x not found");
    for (method, path) in [
        ("GET", "/connectors/x"),
        ("GET", "/connectors/x/status"),
        ("GET", "/connectors/x/offsets"),
        ("PUT", "/connectors/x/stop"),
        ("DELETE", "/connectors/x"),
    ] {
        assert_eq!(call(&fake, method, path, None), missing, "{method} {path}");
    }
    assert_eq!(
        patch(&fake, "x", json!([{ "partition": {}, "offset": null }])),
        missing
    );
    assert_eq!(
        call(&fake, "GET", "/nope", None),
        err(404, "HTTP 404 Not Found")
    );
    assert_eq!(
        call(&fake, "POST", "/connectors/x/status", None),
        err(405, "HTTP 405 Method Not Allowed")
    );
}

#[test]
fn deleting_a_connector_keeps_its_offsets_for_a_recreated_one() {
    let fake = two_connectors();
    assert_eq!(
        call(&fake, "DELETE", "/connectors/pg", None),
        (204, Value::Null)
    );
    assert_eq!(fake.connector_names(), vec!["s3"]);
    assert_eq!(
        call(&fake, "GET", "/connectors/pg/offsets", None),
        err(404, "Connector pg not found")
    );
    assert_eq!(fake.offsets("pg"), pg_offsets());

    let create = json!({ "name": "pg", "config": { "connector.class": PG, "tasks.max": 1 } });
    let (status, info) = call(&fake, "POST", "/connectors", Some(create.clone()));
    assert_eq!(status, 201);
    let config = json!({ "connector.class": PG, "name": "pg", "tasks.max": "1" });
    assert_eq!(
        info,
        json!({ "name": "pg", "config": config, "tasks": [], "type": "source" })
    );
    assert_eq!(
        call(&fake, "GET", "/connectors/pg/offsets", None),
        (200, json!({ "offsets": pg_offsets() }))
    );
    assert_eq!(
        call(&fake, "POST", "/connectors", Some(create)),
        err(409, "Connector pg already exists")
    );
}

#[test]
fn initial_state_depends_on_the_worker_version() {
    let create =
        json!({ "name": "n", "config": { "connector.class": S3 }, "initial_state": "STOPPED" });
    let old = FakeConnect::builder().version("3.6.2").start();
    let (status, body) = call(&old, "POST", "/connectors", Some(create.clone()));
    assert_eq!(status, 500);
    assert!(body["message"]
        .as_str()
        .unwrap()
        .starts_with("Unrecognized field \"initial_state\""));
    assert!(old.connector_names().is_empty());

    let cp_76 = FakeConnect::builder().version("7.6.0-ccs").start();
    let (status, _) = call(&cp_76, "POST", "/connectors", Some(create.clone()));
    assert_eq!(status, 500, "Confluent 7.6 is Apache Kafka 3.6");

    let new = FakeConnect::builder().version("7.7.1-ccs").start();
    assert_eq!(call(&new, "POST", "/connectors", Some(create)).0, 201);
    assert_eq!(new.state("n"), Some(State::Stopped));
    let sink = json!([{ "partition": { "kafka_topic": "t", "kafka_partition": 0 }, "offset": { "kafka_offset": 3 } }]);
    assert_eq!(
        patch(&new, "n", sink.clone()),
        altered(),
        "patchable before it ever ran"
    );
    assert_eq!(new.offsets("n"), sink);
}

#[test]
fn old_versions_lack_the_offsets_endpoints() {
    let v34 = FakeConnect::builder()
        .version("3.4.0")
        .source("pg", PG, State::Stopped, json!([]))
        .start();
    assert_eq!(
        call(&v34, "GET", "/connectors/pg/offsets", None),
        err(404, "HTTP 404 Not Found")
    );
    assert_eq!(
        call(&v34, "PUT", "/connectors/pg/stop", None),
        err(404, "HTTP 404 Not Found")
    );
    let v35 = FakeConnect::builder()
        .version("3.5.1")
        .source("pg", PG, State::Stopped, pg_offsets())
        .start();
    assert_eq!(
        call(&v35, "GET", "/connectors/pg/offsets", None),
        (200, json!({ "offsets": pg_offsets() }))
    );
    assert_eq!(
        patch(&v35, "pg", pg_offsets()),
        err(405, "HTTP 405 Method Not Allowed")
    );
}

#[test]
fn config_endpoints_read_and_replace_config() {
    let fake = two_connectors();
    let (status, config) = call(&fake, "GET", "/connectors/s3/config", None);
    assert_eq!(
        (status, config),
        (
            200,
            json!({ "connector.class": S3, "name": "s3", "tasks.max": "1" })
        )
    );
    let new_config = json!({ "connector.class": S3, "tasks.max": "3", "topics": "t" });
    assert_eq!(
        call(&fake, "PUT", "/connectors/s3/config", Some(new_config)).0,
        200
    );
    assert_eq!(fake.config("s3").unwrap()["tasks.max"], "3");
    assert_eq!(
        fake.state("s3"),
        Some(State::Stopped),
        "a config PUT keeps STOPPED"
    );
    let mismatch = json!({ "connector.class": S3, "name": "other" });
    assert_eq!(
        call(&fake, "PUT", "/connectors/s3/config", Some(mismatch)).0,
        400
    );
    assert_eq!(
        call(
            &fake,
            "PUT",
            "/connectors/fresh/config",
            Some(json!({ "connector.class": PG }))
        )
        .0,
        201
    );
    assert_eq!(fake.state("fresh"), Some(State::Running));
}

#[test]
fn plugin_config_lists_definitions_and_marks_passwords() {
    let fake = FakeConnect::builder()
        .plugin(
            PluginSpec::source(PG)
                .key("database.user", "STRING")
                .password("database.password"),
        )
        .start();
    let (status, defs) = call(
        &fake,
        "GET",
        &format!("/connector-plugins/{PG}/config"),
        None,
    );
    assert_eq!(status, 200);
    let defs = defs.as_array().unwrap();
    let password = defs
        .iter()
        .find(|d| d["name"] == "database.password")
        .unwrap();
    assert_eq!(password["type"], "PASSWORD");
    let fields = [
        "name",
        "type",
        "required",
        "default_value",
        "importance",
        "documentation",
        "group",
        "width",
        "display_name",
        "dependents",
        "order",
    ];
    let mut keys: Vec<&str> = password
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut expected = fields.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(defs.iter().filter(|d| d["type"] == "PASSWORD").count(), 1);
    // The simple class name works too; unknown classes are 404.
    assert_eq!(
        call(
            &fake,
            "GET",
            "/connector-plugins/PostgresConnector/config",
            None
        )
        .0,
        200
    );
    assert_eq!(
        call(&fake, "GET", "/connector-plugins/Nope/config", None).0,
        404
    );
    let (_, list) = call(&fake, "GET", "/connector-plugins", None);
    assert_eq!(
        list,
        json!([{ "class": PG, "type": "source", "version": "1.0.0" }])
    );
}

#[test]
fn resume_returns_to_running_unless_ignored() {
    let fake = FakeConnect::builder()
        .source("pg", PG, State::Stopped, json!([]))
        .start();
    assert_eq!(
        call(&fake, "PUT", "/connectors/pg/resume", None),
        (202, Value::Null)
    );
    assert_eq!(
        call(&fake, "GET", "/connectors/pg/status", None).1["connector"]["state"],
        "STOPPED"
    );
    let (_, running) = call(&fake, "GET", "/connectors/pg/status", None);
    assert_eq!(running["connector"]["state"], "RUNNING");
    assert_eq!(running["tasks"][0]["state"], "RUNNING");

    fake.set_state("pg", State::Stopped);
    fake.set_resume_ignored(true);
    assert_eq!(
        call(&fake, "PUT", "/connectors/pg/resume", None),
        (202, Value::Null)
    );
    for _ in 0..5 {
        assert_eq!(
            call(&fake, "GET", "/connectors/pg/status", None).1["connector"]["state"],
            "STOPPED"
        );
    }
    assert_eq!(fake.state("pg"), Some(State::Stopped));
}

#[test]
fn state_can_be_changed_while_serving() {
    let fake = FakeConnect::start();
    fake.add_connector(ConnectorSpec::sink("s", S3).state(State::Paused).tasks(2));
    assert_eq!(
        call(&fake, "GET", "/connectors/s/status", None).1["tasks"][1]["state"],
        "PAUSED"
    );
    fake.set_offsets("s", json!({ "offsets": [{ "partition": { "kafka_topic": "t", "kafka_partition": 0 }, "offset": { "kafka_offset": 1 } }] }));
    assert_eq!(
        call(&fake, "GET", "/connectors/s/offsets", None).1["offsets"][0]["offset"],
        json!({ "kafka_offset": 1 })
    );
    assert!(fake.remove_connector("s"));
    assert_eq!(call(&fake, "GET", "/connectors", None), (200, json!([])));
}
