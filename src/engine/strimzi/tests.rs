use super::*;
use serde_json::json;

/// A ConfigMap as Strimzi's `listOffsets` writes it (labels, owner reference, Jackson JSON).
const LISTED: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  creationTimestamp: "2024-09-26T10:20:15Z"
  labels:
    strimzi.io/cluster: my-connect-cluster
  name: my-connector-offsets
  namespace: kafka
  ownerReferences:
  - apiVersion: kafka.strimzi.io/v1beta2
    blockOwnerDeletion: false
    controller: false
    kind: KafkaConnector
    name: my-source-connector
    uid: 637e3be7-bd96-43ab-abde-c55b4c4550e0
  resourceVersion: "66951"
  uid: 641d60a9-36eb-4f29-9895-8f2c1eb9638e
data:
  notes: left alone
  offsets.json: |-
    {
      "offsets" : [ {
        "partition" : {
          "filename" : "/opt/kafka/LICENSE"
        },
        "offset" : {
          "position" : 15295
        }
      } ]
    }
"#;

const MIRROR: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: mm2-offsets
  labels:
    strimzi.io/cluster: my-mirror-maker-2
data:
  east-kafka--west-kafka.MirrorSourceConnector.json: |
    {
      "offsets": [
        {
          "partition": {"cluster": "east-kafka", "partition": 0, "topic": "orders"},
          "offset": {"offset": 42}
        }
      ]
    }
  east-kafka--west-kafka.MirrorCheckpointConnector.json: |
    {"offsets": []}
"#;

fn opts(name: Option<&str>, cluster: Option<&str>) -> ImportOptions {
    ImportOptions {
        name: name.map(Into::into),
        cluster: cluster.map(Into::into),
        connector_type: None,
    }
}

#[test]
fn reads_a_configmap_as_strimzi_writes_it() {
    let files = import(Path::new("cm.yaml"), LISTED, &opts(None, None)).unwrap();
    assert_eq!(files.len(), 1);
    let f = &files[0];
    assert_eq!(
        f.metadata.name, "my-source-connector",
        "from the owner reference"
    );
    assert_eq!(f.metadata.cluster, "my-connect-cluster", "from the label");
    assert_eq!(f.metadata.connector_type, ConnectorType::Source);
    assert_eq!(
        serde_json::to_value(&f.offsets).unwrap(),
        json!([{"partition": {"filename": "/opt/kafka/LICENSE"}, "offset": {"position": 15295}}])
    );
    let named = import(Path::new("cm.yaml"), LISTED, &opts(Some("x"), Some("prod"))).unwrap();
    assert_eq!(
        (
            named[0].metadata.name.as_str(),
            named[0].metadata.cluster.as_str()
        ),
        ("x", "prod")
    );
}

#[test]
fn mirror_maker_keys_become_connectors() {
    let files = import(Path::new("mm.yaml"), MIRROR, &opts(None, None)).unwrap_err();
    // The checkpoint connector's empty list cannot tell its type.
    assert!(files[0].message.contains("--type"), "{files:?}");
    let o = ImportOptions {
        connector_type: Some(ConnectorType::Source),
        ..opts(None, None)
    };
    let files = import(Path::new("mm.yaml"), MIRROR, &o).unwrap();
    let names: Vec<&str> = files.iter().map(|f| f.metadata.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "east-kafka->west-kafka.MirrorSourceConnector",
            "east-kafka->west-kafka.MirrorCheckpointConnector"
        ]
    );
    let one = import(
        Path::new("mm.yaml"),
        MIRROR,
        &opts(Some("east-kafka->west-kafka.MirrorSourceConnector"), None),
    )
    .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].metadata.cluster, "my-mirror-maker-2");
    assert_eq!(one[0].offsets[0].offset["offset"], 42);
}

#[test]
fn problems_name_the_line_in_the_configmap() {
    let broken = LISTED.replace("\"position\" : 15295", "\"position\" : 15295,");
    let p = import(Path::new("cm.yaml"), &broken, &opts(None, None)).unwrap_err();
    // `offsets.json: |-` is line 20; the JSON's line 8 (`}` after the trailing comma) is 28.
    assert_eq!(p[0].line, Some(28), "{p:?}");
    let no_cluster = LISTED.replace("strimzi.io/cluster", "other");
    let p = import(Path::new("cm.yaml"), &no_cluster, &opts(None, None)).unwrap_err();
    assert!(p[0].message.contains("--cluster"));
    let p = import(Path::new("cm.yaml"), "kind: Secret\n", &opts(None, None)).unwrap_err();
    assert!(p[0].message.contains("no ConfigMap"));
}

#[test]
fn export_then_import_gives_the_same_file() {
    for (name, offsets) in [
        (
            "orders-sink",
            json!([{"partition": {"kafka_topic": "o", "kafka_partition": 10}, "offset": {"kafka_offset": 7}},
                   {"partition": {"kafka_topic": "o", "kafka_partition": 2}, "offset": {"kafka_offset": 1}}]),
        ),
        (
            "a->b.MirrorSourceConnector",
            json!([{"partition": {"cluster": "a", "partition": 0, "topic": "t"}, "offset": {"offset": 3}}]),
        ),
    ] {
        let file = import_body(
            Path::new("x"),
            &json!({ "offsets": offsets }).to_string(),
            0,
            &ImportMeta {
                name: name.into(),
                cluster: "prod".into(),
                connector_type: None,
            },
        )
        .unwrap();
        let text = export(
            &file,
            &ExportOptions {
                namespace: Some("kafka".into()),
                configmap_name: None,
                api: Api::V1,
            },
        );
        let back = import(Path::new("e.yaml"), &text, &opts(None, None)).unwrap();
        assert_eq!(back.len(), 1, "{text}");
        let want = file.render(crate::model::file::DEFAULT_SCHEMA_REF);
        assert_eq!(back[0].render(crate::model::file::DEFAULT_SCHEMA_REF), want);
    }
}

#[test]
fn export_stops_the_connector_and_points_at_the_configmap() {
    let file = import_body(
        Path::new("x"),
        r#"{"offsets":[{"partition":{"filename":"f"},"offset":{"position":1}}]}"#,
        0,
        &ImportMeta {
            name: "Orders_Src".into(),
            cluster: "prod".into(),
            connector_type: None,
        },
    )
    .unwrap();
    let text = export(&file, &ExportOptions::default());
    let docs: Vec<Yaml> = serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    assert_eq!(docs[0]["metadata"]["name"], "orders-src-offsets");
    assert_eq!(docs[1]["kind"], "KafkaConnector");
    assert_eq!(docs[1]["spec"]["state"], "stopped");
    assert_eq!(
        docs[1]["spec"]["alterOffsets"]["fromConfigMap"]["name"],
        "orders-src-offsets"
    );
    assert!(text.contains("strimzi.io/connector-offsets=alter"));
    let body = docs[0]["data"]["offsets.json"].as_str().unwrap();
    assert_eq!(body, jackson_body(&file.offsets));
}

#[test]
fn operator_signs() {
    let listing = |worker: &str| {
        ConnectorListing::from_json(
            "c",
            &json!({"status": {"name": "c", "connector": {"state": "RUNNING"},
                "tasks": [{"id": 0, "state": "RUNNING", "worker_id": worker}], "type": "source"}}),
        )
        .unwrap()
    };
    let strimzi = listing("my-connect-cluster-connect-0.my-connect-cluster-connect.kafka.svc:8083");
    assert!(operator_warning("c", &strimzi)
        .unwrap()
        .contains("export --format strimzi"));
    assert!(operator_sign(
        "c",
        &listing("mm-mirrormaker2-1.mm-mirrormaker2.ns.svc:8083")
    )
    .is_some());
    assert!(operator_sign("c", &listing("127.0.0.1:8083")).is_none());
    assert!(operator_sign("c", &listing("connect-0.connect.ns.svc:8083")).is_none());
    assert!(operator_sign("a->b.MirrorSourceConnector", &listing("127.0.0.1:8083")).is_some());
    assert!(!is_mirror_name("a->b.Other"));
}

/// The KafkaConnector's schema per API version, from Strimzi's CRD (the file names its source).
fn crd_schema(version: &str) -> Yaml {
    let all: Yaml = serde_yaml::from_str(include_str!("kafkaconnector_crd.yaml")).unwrap();
    all[version].clone()
}

/// What the API server would refuse in `value` under `schema` (the structural subset Strimzi's
/// CRD uses), with strict field validation (`kubectl apply`'s default since Kubernetes 1.27):
/// an unknown field, a wrong type, a value outside `enum` or under `minimum`, a missing
/// required field.
fn refusals(schema: &Yaml, value: &Yaml, at: &str, out: &mut Vec<String>) {
    let ty = schema["type"].as_str().unwrap_or("object");
    let fits = match ty {
        "object" => value.is_mapping(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "boolean" => value.is_bool(),
        other => panic!("type {other} is not in the fixture"),
    };
    if !fits {
        out.push(format!("{at}: not {ty}"));
        return;
    }
    if let Some(allowed) = schema["enum"].as_sequence() {
        if !allowed.contains(value) {
            out.push(format!("{at}: {value:?} not in {allowed:?}"));
        }
    }
    if let (Some(min), Some(n)) = (schema["minimum"].as_i64(), value.as_i64()) {
        if n < min {
            out.push(format!("{at}: {n} < {min}"));
        }
    }
    let Some(map) = value.as_mapping() else {
        return;
    };
    for key in schema["required"].as_sequence().into_iter().flatten() {
        if !map.contains_key(key) {
            out.push(format!("{at}: missing {}", key.as_str().unwrap()));
        }
    }
    let Some(props) = schema["properties"].as_mapping() else {
        // `metadata` (the API server checks it itself) or preserved unknown fields.
        return;
    };
    for (k, v) in map {
        let name = format!("{at}.{}", k.as_str().unwrap());
        match props.get(k) {
            Some(s) => refusals(s, v, &name, out),
            None => out.push(format!("{name}: unknown field")),
        }
    }
}

/// The exported documents of a source connector's file, parsed.
fn exported(api: Api) -> (String, Vec<Yaml>) {
    let file = import_body(
        Path::new("x"),
        r#"{"offsets":[{"partition":{"filename":"f"},"offset":{"position":1}}]}"#,
        0,
        &ImportMeta {
            name: "orders".into(),
            cluster: "prod".into(),
            connector_type: None,
        },
    )
    .unwrap();
    let text = export(
        &file,
        &ExportOptions {
            namespace: Some("kafka".into()),
            configmap_name: None,
            api,
        },
    );
    let docs = serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    (text, docs)
}

#[test]
fn the_exported_connector_is_one_strimzi_1_serves() {
    let (text, docs) = exported(Api::default());
    let connector = &docs[1];
    assert_eq!(connector["apiVersion"], "kafka.strimzi.io/v1", "{text}");
    assert_eq!(connector["kind"], "KafkaConnector");
    let mut refused = Vec::new();
    refusals(&crd_schema("v1"), connector, "", &mut refused);
    assert!(refused.is_empty(), "{refused:?}\n{text}");
    // The field paths Strimzi's operator reads (AbstractConnectOperator: alter needs
    // `stopped`, then reads `alterOffsets.fromConfigMap.name`).
    assert_eq!(connector["spec"]["state"], "stopped");
    assert_eq!(
        connector["spec"]["alterOffsets"]["fromConfigMap"]["name"],
        docs[0]["metadata"]["name"]
    );
    assert!(text.contains("strimzi.io/connector-offsets=alter"));
    // The check refuses what v1 does not define: `spec.pause` (removed in v1), a state
    // outside its enum, an alterOffsets without its ConfigMap.
    let mut wrong = connector.clone();
    wrong["spec"]["pause"] = Yaml::Bool(true);
    wrong["spec"]["state"] = "STOPPED".into();
    wrong["spec"]["alterOffsets"] = Yaml::Mapping(Default::default());
    let mut refused = Vec::new();
    refusals(&crd_schema("v1"), &wrong, "", &mut refused);
    assert_eq!(refused.len(), 3, "{refused:?}");
}

#[test]
fn v1beta2_is_written_when_asked_for_strimzi_before_0_49() {
    let (text, docs) = exported(Api::V1beta2);
    assert_eq!(docs[1]["apiVersion"], "kafka.strimzi.io/v1beta2", "{text}");
    let mut refused = Vec::new();
    refusals(&crd_schema("v1beta2"), &docs[1], "", &mut refused);
    assert!(refused.is_empty(), "{refused:?}");
    assert!(text.contains("1.0.0 and newer serve only v1"), "{text}");
    let (v1, _) = exported(Api::V1);
    assert!(
        v1.contains("--strimzi-api v1beta2"),
        "the comment says how: {v1}"
    );
}

#[test]
fn import_reads_what_both_api_versions_list_and_export() {
    let v1_owner = LISTED.replace(
        "apiVersion: kafka.strimzi.io/v1beta2",
        "apiVersion: kafka.strimzi.io/v1",
    );
    assert_ne!(v1_owner, LISTED);
    for listed in [LISTED, v1_owner.as_str()] {
        let files = import(Path::new("cm.yaml"), listed, &opts(None, None)).unwrap();
        assert_eq!(files[0].metadata.name, "my-source-connector");
    }
    let (v1, _) = exported(Api::V1);
    let (v1beta2, _) = exported(Api::V1beta2);
    let a = import(Path::new("e.yaml"), &v1, &opts(None, None)).unwrap();
    let b = import(Path::new("e.yaml"), &v1beta2, &opts(None, None)).unwrap();
    assert_eq!(a, b);
    assert_eq!(a[0].metadata.name, "orders");
}

#[test]
fn a_mirror_maker_export_names_the_fields_of_its_api_version() {
    let file = import_body(
        Path::new("x"),
        r#"{"offsets":[{"partition":{"cluster":"a","partition":0,"topic":"t"},"offset":{"offset":3}}]}"#,
        0,
        &ImportMeta {
            name: "a->b.MirrorSourceConnector".into(),
            cluster: "prod".into(),
            connector_type: None,
        },
    )
    .unwrap();
    let v1 = export(&file, &ExportOptions::default());
    assert!(
        v1.contains("KafkaMirrorMaker2 resource (kafka.strimzi.io/v1)"),
        "{v1}"
    );
    assert!(!v1.contains("heartbeatConnector"), "v1 has none: {v1}");
    let old = export(
        &file,
        &ExportOptions {
            api: Api::V1beta2,
            ..Default::default()
        },
    );
    assert!(old.contains("heartbeatConnector"), "{old}");
}
