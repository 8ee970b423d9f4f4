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

pub(crate) struct StandIn {
    url: String,
    pub(crate) key_id: String,
    pub(crate) secret: String,
    worker_configuration: String,
}

pub(crate) fn standin() -> Option<StandIn> {
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
    /// The CreateConnector request of connector `name` with `config`, in the worker
    /// configuration that pins cluster a's offsets topic.
    pub(crate) fn request(
        &self,
        tb: &crate::harness::Testbed,
        name: &str,
        config: serde_json::Value,
    ) -> CreateConnector {
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
            worker_configuration_arn: Some(self.worker_configuration.clone()),
            other: Default::default(),
        });
        request
    }

    pub(crate) fn client(&self, secret: &str) -> MskConnect {
        let credentials = Credentials::new(&self.key_id, secret, None, None, "e2e");
        let mut opts = MskOptions::new("us-east-1", credentials);
        opts.endpoint = Some(self.url.clone());
        MskConnect::new(opts).expect("MSK Connect client")
    }
}

pub(crate) fn waits() -> WaitPolicy {
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
    let request = standin.request(&tb, &name, file_source_config(&input, &topic));

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

/// kco with the stand-in's kco.yaml (cluster `m`: its endpoint and region, cluster a's offsets
/// topic, which the stand-in's worker configuration pins) and the credentials file the
/// stand-in was given (profile `kco-msk`). Where the test bed's IAM listener is up (MSK's IAM
/// authentication stood in for, `tests/e2e/msk_iam.rs`), the connectors' Kafka is reached
/// through it with `AWS_MSK_IAM` and its own test credentials (profile `kco-testbed` of the
/// same file), as on Amazon MSK; else through the plain listener.
pub(crate) fn kco_env() -> crate::support::env::TestEnv {
    let dir = service_dir("KCO_E2E_MSK_DIR", "msk-connect");
    let mut yaml = std::fs::read_to_string(dir.join("kco.yaml")).expect("the stand-in's kco.yaml");
    let mut credentials =
        std::fs::read_to_string(dir.join("credentials")).expect("the stand-in's credentials");
    yaml = yaml.replace("mskConnect: {", "mskConnect: {profile: kco-msk, ");
    if let Some(iam) = crate::msk_iam::iam() {
        credentials.push('\n');
        credentials.push_str(&std::fs::read_to_string(iam.dir.join("credentials")).unwrap());
        let plain = yaml
            .lines()
            .find(|l| l.trim_start().starts_with("kafka:"))
            .expect("kafka: in the stand-in's kco.yaml")
            .to_string();
        let through_iam = format!(
            "    kafka: {{bootstrap: \"{}\", sasl: {{mechanism: AWS_MSK_IAM, region: {}, profile: kco-testbed}}}}",
            iam.kafka, iam.region
        );
        yaml = yaml.replace(&plain, &through_iam);
    }
    let env = crate::support::env::TestEnv::new();
    let file = env.path().join("aws-credentials");
    std::fs::write(&file, credentials).unwrap();
    let env = env.args(&["--cluster", "m"]).envs(&[
        ("AWS_SHARED_CREDENTIALS_FILE", file.to_str().unwrap()),
        ("AWS_CONFIG_FILE", "/nonexistent/kco-e2e-aws-config"),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ]);
    env.config(yaml);
    env
}

/// `kco apply --yes` alone rewinds a source on MSK Connect: kco describes the connector,
/// deletes it (its definition in the journal), writes its offsets to the pinned topic and
/// creates it again through the control plane; the records after the rewound position are
/// delivered again, exactly those (counted by content). A kill -9 after the write, before the
/// create, is recovered by `kco recover`: the connector created again from the journal's
/// definition, from the offsets written.
#[test]
fn kco_apply_alone_rewinds_a_source_and_recover_creates_it_after_a_kill() {
    let Some(tb) = testbed() else { return };
    let Some(standin) = standin() else { return };
    let msk = standin.client(&standin.secret);
    let worker = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let starts = write_lines(&input, &numbered("msk", 1..=10));
    let name = unique_name("msk-kco");
    let topic = unique_name("msk-kco-topic");
    let request = standin.request(&tb, &name, file_source_config(&input, &topic));
    let created = msk.create_connector(&request).unwrap();
    let _cleanup = worker.adopt(&name);
    msk.wait_running(&created.connector_arn, &waits()).unwrap();
    worker.wait_read(&name, &input);
    let reader = crate::harness::TopicReader::start(&worker, &topic, dir.path());
    assert_eq!(reader.wait_lines(10), numbered("msk", 1..=10));

    let env = kco_env();
    env.kco(&["snapshot", &name])
        .success("kco snapshot of the MSK Connect cluster");
    let file = env.path().join(format!("snapshots/m/{name}.yaml"));
    let filename = input.to_str().unwrap();
    let at = |line: usize| json!([{"partition": {"filename": filename}, "offset": {"position": starts[line]}}]);
    // Rewound to line 6: lines 6 to 10 again.
    crate::support::data::hand_edit(&file, at(5));
    let run = env.kco(&["apply", file.to_str().unwrap(), "--yes"]);
    let out = run.success("kco apply on MSK Connect");
    assert!(
        out.contains(&format!(
            "Created again from their definitions, running: {name}"
        )),
        "{out}"
    );
    let mut want = numbered("msk", 1..=10);
    want.extend(numbered("msk", 6..=10));
    assert_eq!(reader.wait_lines_settled(15), want);
    let back = msk.find_connector(&name).unwrap().expect("created again");
    assert_ne!(back.connector_arn, created.connector_arn, "a new connector");
    assert_eq!(worker.state(&name), "RUNNING");

    // Rewound to line 9, killed once written, before the create.
    crate::support::data::hand_edit(&file, at(8));
    let mut child = env
        .cmd()
        .args(["-v", "apply", file.to_str().unwrap(), "--yes"])
        .discard_stdout()
        .spawn();
    let seen = crate::support::run::kill_when_seen(&mut child, ": write_topic ok");
    assert!(seen, "the write step never printed");
    assert!(
        !worker.has_connector(&name),
        "killed between the write and the create"
    );
    let journal = env.path().join(".kco/journal/m.json");
    assert!(journal.exists(), "the journal keeps the definition");
    let recovered = env.kco(&["recover"]);
    let said = recovered.success("kco recover");
    assert!(said.contains("created again"), "{said}");
    assert!(!journal.exists(), "journal cleared");
    worker.wait_running(&name);
    want.extend(numbered("msk", 9..=10));
    assert_eq!(reader.wait_lines_settled(17), want);

    if let Some(c) = msk.find_connector(&name).unwrap() {
        let _ = msk.delete_connector(&c.connector_arn, c.current_version.as_deref());
        let _ = msk.wait_gone(&c.connector_arn, &name, &waits());
    }
}

/// A sink on MSK Connect rewound by `kco apply --yes` alone: kco deletes it (its group keeps
/// the committed offsets), commits the file's offset to its group `connect-<name>` once its
/// task has left, and creates it again; exactly the records after the rewound offset are
/// delivered again (counted by content in the file it writes).
#[test]
fn kco_apply_alone_rewinds_a_sink() {
    let Some(tb) = testbed() else { return };
    let Some(standin) = standin() else { return };
    let msk = standin.client(&standin.secret);
    let worker = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    write_lines(&input, &numbered("sink", 1..=10));
    let topic = unique_name("msk-sink-topic");
    let _src = worker.create(
        &unique_name("msk-sink-src"),
        file_source_config(&input, &topic),
    );
    let out = dir.path().join("out.txt");
    let name = unique_name("msk-sink");
    let request = standin.request(&tb, &name, crate::harness::file_sink_config(&out, &topic));
    let created = msk.create_connector(&request).unwrap();
    let _cleanup = worker.adopt(&name);
    msk.wait_running(&created.connector_arn, &waits()).unwrap();
    let lines = || {
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    crate::harness::wait_for("the sink's 10 lines", crate::harness::WAIT, || {
        let got = lines();
        (got.len() >= 10).then_some(()).ok_or(format!("{got:?}"))
    });
    worker.wait_offsets(&name, "the sink to commit offset 10", |o| {
        crate::harness::sink_offset(o, &topic) == Some(10)
    });

    let env = kco_env();
    env.kco(&["snapshot", &name])
        .success("kco snapshot of the sink");
    let file = env.path().join(format!("snapshots/m/{name}.yaml"));
    crate::support::data::hand_edit(
        &file,
        json!([{"partition": {"kafka_topic": topic, "kafka_partition": 0}, "offset": {"kafka_offset": 6}}]),
    );
    env.kco(&["apply", file.to_str().unwrap(), "--yes"])
        .success("kco apply of the sink on MSK Connect");
    let mut want = numbered("sink", 1..=10);
    want.extend(numbered("sink", 7..=10));
    crate::harness::wait_for("lines 7 to 10 again", crate::harness::WAIT, || {
        let got = lines();
        (got.len() >= 14).then_some(()).ok_or(format!("{got:?}"))
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(lines(), want, "exactly the rewound records, once more");
    assert_eq!(worker.state(&name), "RUNNING");

    if let Some(c) = msk.find_connector(&name).unwrap() {
        let _ = msk.delete_connector(&c.connector_arn, c.current_version.as_deref());
        let _ = msk.wait_gone(&c.connector_arn, &name, &waits());
    }
}

/// A wrong secret key for the control plane fails kco's first request, exit 1, naming where
/// the credentials came from (the profile and its file) and the access key id; neither the
/// wrong secret nor the right one appears in what kco prints, `-v` included.
#[test]
fn a_wrong_secret_key_fails_the_first_request_naming_the_profile_and_never_printed() {
    let Some(_tb) = testbed() else { return };
    let Some(standin) = standin() else { return };
    let env = kco_env();
    let file = env.path().join("aws-credentials");
    let wrong = "WrongSecretKeyWrongSecretKeyWrongSecret0";
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(&standin.secret));
    std::fs::write(&file, text.replace(&standin.secret, wrong)).unwrap();
    let run = env.kco(&["-v", "ls"]);
    assert_eq!(run.code, 1, "{run}");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("HTTP 403: InvalidSignatureException")
            && said.contains("credentials from profile `kco-msk`")
            && said.contains(&standin.key_id),
        "{said}"
    );
    assert!(
        !said.contains(wrong) && !said.contains(&standin.secret),
        "{said}"
    );
}

/// A source without a worker configuration that pins the offsets topic kco writes is refused
/// before anything changes (created again, it would read its offsets from MSK's topic of its
/// own deployment, never what kco wrote): exit 1, the change to make named, the connector
/// still there and RUNNING, its offsets as they were.
#[test]
fn a_source_whose_worker_configuration_pins_no_offsets_topic_is_refused_with_nothing_changed() {
    let Some(tb) = testbed() else { return };
    let Some(standin) = standin() else { return };
    let msk = standin.client(&standin.secret);
    let worker = tb.a();
    let dir = temp_dir();
    let input = dir.path().join("in.txt");
    let starts = write_lines(&input, &numbered("unpinned", 1..=5));
    let name = unique_name("msk-unpinned");
    let mut request = standin.request(
        &tb,
        &name,
        file_source_config(&input, &unique_name("msk-unpinned-topic")),
    );
    request.worker_configuration = None;
    let created = msk.create_connector(&request).unwrap();
    let _cleanup = worker.adopt(&name);
    msk.wait_running(&created.connector_arn, &waits()).unwrap();
    let before = worker.wait_read(&name, &input);

    let env = kco_env();
    env.kco(&["snapshot", &name]).success("kco snapshot");
    let file = env.path().join(format!("snapshots/m/{name}.yaml"));
    crate::support::data::hand_edit(
        &file,
        json!([{"partition": {"filename": input.to_str().unwrap()}, "offset": {"position": starts[2]}}]),
    );
    let run = env.kco(&["apply", file.to_str().unwrap(), "--yes"]);
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr.contains("it has no worker configuration")
            && run.stderr.contains("offset.storage.topic=kco-a-offsets")
            && run.stderr.contains("nothing was changed"),
        "{run}"
    );
    let still = msk.find_connector(&name).unwrap().expect("not deleted");
    assert_eq!(still.connector_arn, created.connector_arn);
    assert_eq!(worker.state(&name), "RUNNING");
    assert_eq!(worker.offsets(&name), before, "offsets untouched");
    assert!(!env.path().join(".kco/journal/m.json").exists());

    let _ = msk.delete_connector(&created.connector_arn, still.current_version.as_deref());
    let _ = msk.wait_gone(&created.connector_arn, &name, &waits());
}
