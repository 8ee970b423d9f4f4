//! The MSK Connect stand-in (`scripts/msk-connect.sh up`) in front of cluster a's real
//! worker, driven by kco's MSK Connect client as kco drives the service: a FileStream source
//! created through the API (with the worker configuration that pins cluster a's offsets
//! topic) runs on the worker; described, deleted with its `currentVersion` (gone from the
//! worker), and created again from what was described, it runs again under a new ARN and
//! version with the offsets it had. A request signed with another secret is refused.
//!
//! Skipped when the stand-in is not there, unless `KCO_E2E_MSK_CONNECT=required`.
//! `KCO_E2E_MSK_CONNECT_URL` (default http://127.0.0.1:8095) and `KCO_E2E_MSK_DIR` (default
//! `<test bed dir>/msk-connect`) point elsewhere.

use std::time::Duration;

use kco::client::msk_connect::{
    AwsError, ConnectorState, CreateConnector, Credentials, MskConnect, MskOptions,
    WorkerConfigurationRef,
};
use kco::wait::WaitPolicy;
use serde_json::json;

use crate::harness::{
    env_url, file_source_config, numbered, service_dir, service_file, temp_dir, testbed,
    unique_name, write_lines,
};

const VAR: &str = "KCO_E2E_MSK_CONNECT";

struct StandIn {
    url: String,
    key_id: String,
    secret: String,
    worker_configuration: String,
}

fn standin() -> Option<StandIn> {
    let dir = service_dir("KCO_E2E_MSK_DIR", "msk-connect");
    let credentials = service_file(&dir, "credentials", VAR, "msk-connect.sh")?;
    let value = |key: &str| {
        credentials
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once('=')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| panic!("{key} in {}/credentials", dir.display()))
    };
    let arn = std::fs::read_to_string(dir.join("kco-a-pinned.arn"))
        .expect("the stand-in's kco-a-pinned.arn (scripts/msk-connect.sh down, then up)");
    Some(StandIn {
        url: env_url("KCO_E2E_MSK_CONNECT_URL", "http://127.0.0.1:8095"),
        key_id: value("aws_access_key_id"),
        secret: value("aws_secret_access_key"),
        worker_configuration: arn.trim().to_string(),
    })
}

impl StandIn {
    fn client(&self, secret: &str) -> MskConnect {
        let credentials = Credentials::new(&self.key_id, secret, None, None, "e2e");
        let mut opts = MskOptions::new("us-east-1", credentials);
        opts.endpoint = Some(self.url.clone());
        MskConnect::new(opts).expect("MSK Connect client")
    }
}

fn waits() -> WaitPolicy {
    WaitPolicy::with_timeout(Duration::from_secs(90))
}

#[test]
fn a_source_created_through_the_api_runs_on_the_worker_and_comes_back_with_its_offsets() {
    let Some(tb) = testbed() else { return };
    let Some(standin) = standin() else { return };
    let msk = standin.client(&standin.secret);
    let worker = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("msk", 1..=10));
    let name = unique_name("msk-src");
    let topic = unique_name("msk-topic");
    let config = file_source_config(&input, &topic);
    let mut request: CreateConnector = serde_json::from_value(json!({
        "connectorName": name,
        "capacity": { "provisionedCapacity": { "mcuCount": 1, "workerCount": 1 } },
        "connectorConfiguration": config,
        "kafkaCluster": { "apacheKafkaCluster": {
            "bootstrapServers": tb.kafka(),
            "vpc": { "securityGroups": ["sg-e2e"], "subnets": ["subnet-e2e"] }
        } },
        "kafkaClusterClientAuthentication": { "authenticationType": "NONE" },
        "kafkaClusterEncryptionInTransit": { "encryptionType": "PLAINTEXT" },
        "kafkaConnectVersion": "3.7.x",
        "plugins": [{ "customPlugin": {
            "customPluginArn": "arn:aws:kafkaconnect:us-east-1:123456789012:custom-plugin/filestream/e2e-1",
            "revision": 1
        } }],
        "serviceExecutionRoleArn": "arn:aws:iam::123456789012:role/kco-e2e"
    }))
    .expect("a CreateConnector request");
    request.worker_configuration = Some(WorkerConfigurationRef {
        revision: Some(1),
        worker_configuration_arn: Some(standin.worker_configuration.clone()),
        other: Default::default(),
    });

    // Another secret for the same key id: refused, nothing created.
    let refused = standin
        .client("NotTheSecret0000000000000000000000000000")
        .create_connector(&request)
        .unwrap_err();
    assert_eq!(AwsError::of(&refused), AwsError::Forbidden, "{refused}");
    assert!(!worker.has_connector(&name));

    let created = msk.create_connector(&request).unwrap();
    let _cleanup = worker.adopt(&name);
    let running = msk.wait_running(&created.connector_arn, &waits()).unwrap();
    assert_eq!(running.connector_state, ConnectorState::Running);
    assert_eq!(worker.state(&name), "RUNNING");
    let offsets = worker.wait_read(&name, &input);

    let described = msk.describe_connector(&created.connector_arn).unwrap();
    let again = described
        .to_create()
        .expect("described with its configuration");
    assert_eq!(again, request);
    let pinned = msk
        .describe_worker_configuration(described.worker_configuration_arn().unwrap())
        .unwrap();
    assert_eq!(
        pinned.offset_storage_topic().unwrap().as_deref(),
        Some("kco-a-offsets")
    );

    let version = described.current_version.as_deref();
    msk.delete_connector(&created.connector_arn, version)
        .unwrap();
    msk.wait_gone(&created.connector_arn, &name, &waits())
        .unwrap();
    assert!(!worker.has_connector(&name));

    let recreated = msk.create_connector(&again).unwrap();
    assert_ne!(recreated.connector_arn, created.connector_arn);
    let back = msk
        .wait_running(&recreated.connector_arn, &waits())
        .unwrap();
    assert_ne!(back.current_version, described.current_version);
    assert_eq!(worker.state(&name), "RUNNING");
    // The worker configuration pins the worker's offsets topic: the same name reads on
    // from where it was.
    assert_eq!(worker.offsets(&name), offsets);

    let version = back.current_version.as_deref();
    msk.delete_connector(&recreated.connector_arn, version)
        .unwrap();
    msk.wait_gone(&recreated.connector_arn, &name, &waits())
        .unwrap();
    assert!(!worker.has_connector(&name));
}
