//! The client against the stand-in (`crate::fake::msk_connect`), in process, backed by the
//! fake Connect worker.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::fake::msk_connect::{MskStandIn, MskStandInConfig, TestKey};
use crate::fake::FakeConnect;
use crate::wait::ManualClock;

const KEY: &str = "AKIASTANDIN0000TEST";
const SECRET: &str = "standin/Secret+Key0000000000000000000000";

fn standin(worker: &FakeConnect, page_size: usize) -> MskStandIn {
    let mut config = MskStandInConfig::new(worker.url()).key(KEY, SECRET);
    config.page_size = page_size;
    config.worker_offsets_topic = Some("connect-offsets".into());
    MskStandIn::start(config).expect("stand-in starts")
}

fn client_as(standin: &MskStandIn, key: &str, secret: &str) -> MskConnect {
    let mut opts = MskOptions::new(
        standin.region(),
        Credentials::new(key, secret, None, None, "test"),
    );
    opts.endpoint = Some(standin.url());
    opts.retry = RetryPolicy(WaitPolicy {
        timeout: Duration::from_secs(10),
        first_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
    });
    MskConnect::new(opts)
        .expect("client builds")
        .with_clock(ManualClock::default())
}

fn client(standin: &MskStandIn) -> MskConnect {
    client_as(standin, KEY, SECRET)
}

fn waits() -> WaitPolicy {
    WaitPolicy::with_timeout(Duration::from_secs(60))
}

/// Every member `CreateConnector` takes, as a user's connector would have them.
fn full_request(name: &str, worker_configuration: Option<&str>) -> CreateConnector {
    let mut request: CreateConnector = serde_json::from_value(json!({
        "connectorName": name,
        "connectorDescription": "orders from the file",
        "capacity": {
            "autoScaling": {
                "maxWorkerCount": 4, "mcuCount": 2, "minWorkerCount": 1,
                "scaleInPolicy": { "cpuUtilizationPercentage": 20 },
                "scaleOutPolicy": { "cpuUtilizationPercentage": 80 }
            }
        },
        "connectorConfiguration": {
            "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max": "1",
            "file": "/tmp/orders.txt",
            "topic": "orders"
        },
        "kafkaCluster": {
            "apacheKafkaCluster": {
                "bootstrapServers": "b-1.msk.example:9098,b-2.msk.example:9098",
                "vpc": { "securityGroups": ["sg-1"], "subnets": ["subnet-1", "subnet-2"] }
            }
        },
        "kafkaClusterClientAuthentication": { "authenticationType": "IAM" },
        "kafkaClusterEncryptionInTransit": { "encryptionType": "TLS" },
        "kafkaConnectVersion": "3.7.x",
        "logDelivery": {
            "workerLogDelivery": {
                "cloudWatchLogs": { "enabled": true, "logGroup": "/msk/connect" },
                "firehose": { "enabled": false },
                "s3": { "enabled": true, "bucket": "logs", "prefix": "connect/" }
            }
        },
        "plugins": [{ "customPlugin": {
            "customPluginArn": "arn:aws:kafkaconnect:us-east-1:123456789012:custom-plugin/file/abc-1",
            "revision": 1
        } }],
        "networkType": "DUAL",
        "serviceExecutionRoleArn": "arn:aws:iam::123456789012:role/msk-connect"
    }))
    .expect("a CreateConnector request");
    request.worker_configuration = worker_configuration.map(|arn| WorkerConfigurationRef {
        revision: Some(1),
        worker_configuration_arn: Some(arn.to_string()),
        other: Other::new(),
    });
    request
}

/// A describe answer with members this code does not know, nested and at the top, becomes a
/// create request that keeps all of them; only what describes a connector (ARN, state,
/// version, creation time, state description) is left out.
#[test]
fn a_described_connector_becomes_its_create_request_without_losing_a_member() {
    let mut described = serde_json::to_value(full_request("orders", Some("arn:wc/1"))).unwrap();
    described["capacity"]["autoScaling"]["futureKnob"] = json!({ "x": 1 });
    described["kafkaCluster"]["apacheKafkaCluster"]["vpc"]["ipv6"] = json!(true);
    described["futureMember"] = json!({ "added": "later" });
    let expected = described.clone();
    described["connectorArn"] = json!("arn:aws:kafkaconnect:us-east-1:1:connector/orders/x-1");
    described["connectorState"] = json!("RUNNING");
    described["currentVersion"] = json!("KTVPDKIKX0DER");
    described["creationTime"] = json!("2026-12-07T10:00:00.000Z");
    described["stateDescription"] = json!({ "code": "x", "message": "y" });
    let parsed: ConnectorDescription = serde_json::from_value(described).unwrap();
    assert_eq!(parsed.connector_state, ConnectorState::Running);
    let create = parsed
        .to_create()
        .expect("a description has a configuration");
    assert_eq!(serde_json::to_value(&create).unwrap(), expected);
    // A state the model does not list yet reads as Unknown instead of failing the answer.
    let odd: ConnectorDescription = serde_json::from_value(json!({
        "connectorArn": "a", "connectorName": "n", "connectorState": "PAUSING"
    }))
    .unwrap();
    assert_eq!(odd.connector_state, ConnectorState::Unknown);
    assert!(odd.to_create().is_none(), "a summary has no configuration");
}

/// The full cycle kco runs: create, RUNNING on the worker, describe, delete with its
/// version (a stale one refused), gone from the worker, created again from the description
/// with every member kept, under a new ARN and version.
#[test]
fn create_describe_delete_and_create_again_keeps_every_member() {
    let worker = FakeConnect::start();
    let standin = standin(&worker, 10);
    let msk = client(&standin);
    let wc_arn = standin.add_worker_configuration(
        "pinned",
        "key.converter=org.apache.kafka.connect.json.JsonConverter\noffset.storage.topic = connect-offsets\n",
    );
    let request = full_request("orders", Some(&wc_arn));
    let created = msk.create_connector(&request).unwrap();
    assert_eq!(created.connector_state, Some(ConnectorState::Creating));
    let running = msk.wait_running(&created.connector_arn, &waits()).unwrap();
    assert_eq!(worker.connector_names(), vec!["orders".to_string()]);
    // The worker's config is the connector configuration (Connect adds the name).
    let mut on_worker = worker.config("orders").unwrap();
    assert_eq!(on_worker.remove("name").as_deref(), Some("orders"));
    assert_eq!(on_worker, request.connector_configuration);
    assert!(standin.notes().is_empty(), "{:?}", standin.notes());

    let described = msk.describe_connector(&created.connector_arn).unwrap();
    assert_eq!(described, running);
    let again = described.to_create().unwrap();
    assert_eq!(again, request);
    assert_eq!(
        msk.offset_storage_topic(&described).unwrap().as_deref(),
        Some("connect-offsets")
    );

    let stale = msk
        .delete_connector(&created.connector_arn, Some("NOTTHEVERSION"))
        .unwrap_err();
    assert_eq!(AwsError::of(&stale), AwsError::BadRequest);
    assert_eq!(
        worker.connector_names().len(),
        1,
        "a stale delete changes nothing"
    );
    let version = described.current_version.as_deref();
    let state = msk
        .delete_connector(&created.connector_arn, version)
        .unwrap();
    assert_eq!(state, Some(ConnectorState::Deleting));
    msk.wait_gone(&created.connector_arn, "orders", &waits())
        .unwrap();
    assert!(worker.connector_names().is_empty());
    let gone = msk.describe_connector(&created.connector_arn).unwrap_err();
    assert_eq!(AwsError::of(&gone), AwsError::NotFound);
    assert!(msk.find_connector("orders").unwrap().is_none());

    let recreated = msk.create_connector(&again).unwrap();
    assert_ne!(recreated.connector_arn, created.connector_arn);
    let now = msk
        .wait_running(&recreated.connector_arn, &waits())
        .unwrap();
    assert_ne!(now.current_version, described.current_version);
    assert_eq!(now.to_create().unwrap(), request);
    assert_eq!(worker.connector_names(), vec!["orders".to_string()]);
}

/// A name in use is a 409 ConflictException, not retried (it is no rebalance); a worker
/// configuration that does not pin the worker's offsets topic is noted as what MSK would
/// do instead.
#[test]
fn a_taken_name_is_a_conflict_and_an_unpinned_offsets_topic_is_noted() {
    let worker = FakeConnect::start();
    let standin = standin(&worker, 10);
    let msk = client(&standin);
    let first = msk.create_connector(&full_request("s", None)).unwrap();
    let described = msk.describe_connector(&first.connector_arn).unwrap();
    assert_eq!(msk.offset_storage_topic(&described).unwrap(), None);
    let taken = msk.create_connector(&full_request("s", None)).unwrap_err();
    assert_eq!(AwsError::of(&taken), AwsError::Conflict);
    assert!(!taken.is_retryable());
    let posts = standin
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 2);
    assert!(taken
        .to_string()
        .contains("ConflictException: A connector with the name s already exists."));
    let notes = standin.notes();
    let id = first.connector_arn.rsplit('/').next().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains(&format!("__amazon_msk_connect_offsets_s_{id}")),
        "{notes:?}"
    );
}

/// `ListConnectors` is read page by page (`nextToken`) until the last, and a prefix keeps
/// only the names that start with it.
#[test]
fn lists_every_page_and_filters_by_prefix() {
    let worker = FakeConnect::start();
    let standin = standin(&worker, 2);
    let msk = client(&standin);
    for name in ["a-1", "a-2", "a-3", "b-1", "b-2"] {
        msk.create_connector(&full_request(name, None)).unwrap();
    }
    let all = msk.list_connectors(None).unwrap();
    let names: Vec<&str> = all.iter().map(|c| c.connector_name.as_str()).collect();
    assert_eq!(names, ["a-1", "a-2", "a-3", "b-1", "b-2"]);
    assert!(all.iter().all(|c| c.connector_configuration.is_none()));
    let pages = standin
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.target.starts_with("/v1/connectors"))
        .count();
    assert_eq!(pages, 3);
    let a: Vec<String> = msk
        .list_connectors(Some("a-"))
        .unwrap()
        .into_iter()
        .map(|c| c.connector_name)
        .collect();
    assert_eq!(a, ["a-1", "a-2", "a-3"]);
    assert_eq!(
        msk.find_connector("b-2").unwrap().unwrap().connector_name,
        "b-2"
    );
}

/// A wrong secret is refused by the signature check (403 InvalidSignatureException); the
/// error names the access key id and never shows the secret, in Display or Debug. An
/// unknown key id is refused too.
#[test]
fn a_wrong_secret_is_refused_and_never_shown() {
    let worker = FakeConnect::start();
    let standin = standin(&worker, 10);
    let wrong = "WrongSecretThatMustNeverBePrinted000000";
    let e = client_as(&standin, KEY, wrong)
        .list_connectors(None)
        .unwrap_err();
    assert_eq!(AwsError::of(&e), AwsError::Forbidden);
    let shown = format!("{e} {e:?} {}", e.hint.as_deref().map_or("", |h| h.as_str()));
    assert!(shown.contains("InvalidSignatureException: The request signature we calculated"));
    assert!(shown.contains(KEY), "{shown}");
    assert!(!shown.contains(wrong) && !shown.contains(SECRET), "{shown}");
    let opts = MskOptions::new("us-east-1", Credentials::new(KEY, wrong, None, None, "t"));
    assert!(!format!("{opts:?}").contains(wrong));
    let unknown = client_as(&standin, "AKIAUNKNOWN", SECRET)
        .list_connectors(None)
        .unwrap_err();
    assert!(unknown.to_string().contains(
        "UnrecognizedClientException: The security token included in the request is invalid."
    ));
    assert!(worker.connector_names().is_empty());
}

/// A 429 is retried with backoff until the service answers.
#[test]
fn throttling_is_retried() {
    let worker = FakeConnect::start();
    let standin = standin(&worker, 10);
    let msk = client(&standin);
    standin.throttle(2);
    assert!(msk.list_connectors(None).unwrap().is_empty());
    let statuses: Vec<u16> = standin.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [429, 429, 200]);
}

/// A connector whose tasks fail on the worker while it is created goes FAILED, and the
/// wait says which connector and why.
#[test]
fn a_failed_connector_is_an_error_naming_it_and_why() {
    let worker = FakeConnect::start();
    let standin = standin(&worker, 10);
    let msk = client(&standin);
    let created = msk.create_connector(&full_request("bad", None)).unwrap();
    worker.fail_tasks(
        "bad",
        Some("org.apache.kafka.connect.errors.ConnectException: no such file\n\tat x.y(Z.java:1)"),
    );
    let e = msk
        .wait_running(&created.connector_arn, &waits())
        .unwrap_err();
    let shown = e.to_string();
    assert!(matches!(e, MskWaitError::Failed { .. }), "{shown}");
    assert!(
        shown.starts_with("MSK Connect connector bad is FAILED")
            && shown.contains("ConnectException: no such file")
            && !shown.contains("Z.java"),
        "{shown}"
    );
    let described = msk.describe_connector(&created.connector_arn).unwrap();
    assert_eq!(described.connector_state, ConnectorState::Failed);
}

#[test]
fn properties_are_read_as_java_reads_them() {
    let props = parse_properties(
        "# comment\n! also\noffset.storage.topic = kco-a-offsets\nkey:value\nlong=a\\\n  b\nflag\n",
    );
    let expected: BTreeMap<String, String> = [
        ("offset.storage.topic", "kco-a-offsets"),
        ("key", "value"),
        ("long", "ab"),
        ("flag", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(props, expected);
    let wc = WorkerConfiguration {
        worker_configuration_arn: "arn".into(),
        name: None,
        description: None,
        creation_time: None,
        worker_configuration_state: None,
        latest_revision: Some(WorkerConfigurationRevision {
            revision: Some(1),
            description: None,
            creation_time: None,
            properties_file_content: Some(properties_file_content(&expected)),
            other: Other::new(),
        }),
        other: Other::new(),
    };
    assert_eq!(wc.properties().unwrap(), expected);
    let _: Value = serde_json::to_value(&wc).unwrap();
}

/// Temporary credentials sign with their session token (`x-amz-security-token`, signed);
/// the same key without it is refused.
#[test]
fn temporary_credentials_send_their_session_token() {
    let worker = FakeConnect::start();
    let mut config = MskStandInConfig::new(worker.url());
    let key = TestKey {
        secret: SECRET.into(),
        session_token: Some("FwoGZXIvYXdzEXAMPLETOKEN".into()),
    };
    config.keys.insert("ASIASTANDINTEMP".into(), key);
    let standin = MskStandIn::start(config).unwrap();
    let with = |token: Option<&str>| {
        let credentials = Credentials::new(
            "ASIASTANDINTEMP",
            SECRET,
            token.map(str::to_string),
            None,
            "t",
        );
        let mut opts = MskOptions::new(standin.region(), credentials);
        opts.endpoint = Some(standin.url());
        opts.retry = RetryPolicy::none();
        MskConnect::new(opts).unwrap()
    };
    assert!(with(Some("FwoGZXIvYXdzEXAMPLETOKEN"))
        .list_connectors(None)
        .is_ok());
    let refused = with(None).list_connectors(None).unwrap_err();
    assert_eq!(AwsError::of(&refused), AwsError::Forbidden);
    assert!(refused.to_string().contains("UnrecognizedClientException"));
}

/// On the MSK Connect API's paths a 409 is a name taken (not a Connect rebalance, which is
/// retried) and a 503 asks to be sent again.
#[test]
fn msk_connects_409_and_503_are_read_as_its_own() {
    use crate::client::{Problem, Request};
    let msk = Request::new(Method::Post, "/v1/connectors");
    let taken = ClientError::http(&msk, "u", 409, "ConflictException: taken");
    assert_eq!(taken.problem(), Some(Problem::AlreadyExists));
    assert!(!taken.is_retryable());
    let busy = ClientError::http(&msk, "u", 503, "ServiceUnavailableException: later");
    assert!(busy.is_retryable() && busy.had_no_effect());
    let connect = Request::new(Method::Post, "/connectors");
    let rebalance = ClientError::http(&connect, "u", 409, "stale configuration");
    assert_eq!(rebalance.problem(), Some(Problem::Rebalance));
}
