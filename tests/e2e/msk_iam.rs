//! Amazon MSK's IAM authentication to Kafka (`kafka.sasl.mechanism: AWS_MSK_IAM`), against the
//! test bed's stand-in for MSK's IAM listener: the broker's listener IAM
//! (`scripts/local-connect.sh up`, SASL_PLAINTEXT on `KCO_IAM_PORT`) whose OAUTHBEARER tokens
//! testbed/iam's validator checks as SigV4 presigned URLs, with the test credentials the
//! script wrote in `<test bed dir>/iam`.
//!
//! kco with the credentials of a profile of a shared credentials file reads cluster a from its
//! topics through the listener (MSK Connect's case: a snapshot of a connector, its config and
//! state from the config and status topics, its offsets from the offsets topic) and writes
//! through it (the rewound file applied through Kafka once the connector is deleted; created
//! again, it re-delivers exactly the rewound lines). With the credentials in the environment
//! it lists a deleted source's leftovers through the listener; a wrong secret key fails at
//! the first request, exit 1, naming the broker, the credential source and the broker's
//! reason, the secret nowhere in what kco prints (`-v` too) or writes; no credentials at all
//! is an error naming the chain tried. Tokens signed 16 minutes ago, or for another region,
//! are refused by the broker's validator; one signed 10 minutes ago is taken. And
//! `mechanism: OAUTHBEARER` with a token endpoint (one on loopback, here, handing out MSK
//! tokens signed with the test credentials) authenticates through the same listener; a token
//! the broker does not take, and an endpoint that refuses the client, each fail naming the
//! endpoint.
//!
//! Skipped when the listener's credentials are not there, unless `KCO_E2E_IAM=required`.
//! `KCO_E2E_IAM_KAFKA` (default 127.0.0.1:9096) and `KCO_E2E_IAM_DIR` (default
//! `<test bed dir>/iam`) point elsewhere.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use kco::aws::{CredentialSource, Credentials, Found};
use kco::kafka::msk_iam::MskIam;
use kco::kafka::{KafkaOptions, Sasl};

use crate::harness::{
    file_source_config, numbered, service_dir, service_file, testbed, unique_name, wait_for,
    write_lines, TopicReader,
};
use crate::kco_steps::edit_and_fmt;
use crate::support::env::TestEnv;

pub(crate) struct Iam {
    pub(crate) kafka: String,
    pub(crate) dir: PathBuf,
    pub(crate) region: String,
    key_id: String,
    secret: String,
}

pub(crate) fn iam() -> Option<Iam> {
    let dir = service_dir("KCO_E2E_IAM_DIR", "iam");
    let keys = service_file(&dir, "keys.properties", "KCO_E2E_IAM", "local-connect.sh")?;
    let (key_id, secret) = keys.trim().split_once('=').expect("key=secret");
    let region = std::fs::read_to_string(dir.join("region")).unwrap();
    Some(Iam {
        kafka: std::env::var("KCO_E2E_IAM_KAFKA").unwrap_or_else(|_| "127.0.0.1:9096".into()),
        region: region.trim().to_string(),
        key_id: key_id.to_string(),
        secret: secret.to_string(),
        dir,
    })
}

impl Iam {
    /// `kafka:` through the IAM listener, with `extra` in `sasl:` (`profile: x`).
    fn kafka_block(&self, extra: &str) -> String {
        format!(
            "    kafka:\n      bootstrap: \"{}\"\n      sasl: {{mechanism: AWS_MSK_IAM, region: {}{extra}}}\n",
            self.kafka, self.region
        )
    }

    /// The library's options for the listener, signing with the test credentials at `at`
    /// for `region`.
    fn options(&self, region: &str, at: SystemTime) -> KafkaOptions {
        let creds = Credentials::new(&self.key_id, &self.secret, None, None, "test");
        let iam = MskIam::new(region, CredentialSource::DefaultChain)
            .with_clock(move || at)
            .with_credentials(move |_| {
                Ok(Found {
                    credentials: creds.clone(),
                    from: "the test bed's keys".into(),
                })
            });
        KafkaOptions {
            bootstrap: vec![self.kafka.clone()],
            sasl: Some(Sasl::AwsMskIam(Arc::new(iam))),
            tls: None,
            timeout: Duration::from_secs(15),
        }
    }
}

/// Every file under `dir`, for a look for a secret.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn assert_secret_nowhere(iam: &Iam, env: &TestEnv, printed: &str) {
    assert!(
        !printed.contains(&iam.secret),
        "the secret key printed: {printed}"
    );
    assert!(
        !printed.contains("X-Amz-Signature"),
        "a token printed: {printed}"
    );
    for f in files_under(env.path()) {
        let bytes = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(&iam.secret),
            "the secret key in {}",
            f.display()
        );
        assert!(
            !text.contains("X-Amz-Signature"),
            "a token in {}",
            f.display()
        );
    }
}

#[test]
fn cluster_a_is_read_from_its_topics_and_written_through_the_iam_listener_with_a_profiles_credentials(
) {
    let Some(tb) = testbed() else { return };
    let Some(iam) = iam() else { return };
    let a = tb.a();
    let env = TestEnv::new().args(&["--cluster", "a"]).envs(&[
        (
            "AWS_SHARED_CREDENTIALS_FILE",
            iam.dir.join("credentials").to_str().unwrap(),
        ),
        ("AWS_EC2_METADATA_DISABLED", "true"),
    ]);
    env.config(format!(
        "clusters:\n  a:\n{}    connectTopics: {{offsets: kco-a-offsets, configs: kco-a-configs, status: kco-a-status}}\n",
        iam.kafka_block(", profile: kco-testbed")
    ));
    let input = env.path().join("in.txt");
    let lines = numbered("msk-iam", 0..9);
    let starts = write_lines(&input, &lines);
    let len = std::fs::metadata(&input).unwrap().len();
    let topic = unique_name("kco-e2e-msk-iam");
    let src = unique_name("kco-e2e-msk-iam-src");
    let config = file_source_config(&input, &topic);
    let created = a.create(&src, config.clone());
    a.wait_running(&src);
    a.wait_read(&src, &input);
    let reader = TopicReader::start(&a, &topic, env.path());
    assert_eq!(reader.wait_lines(9), lines);

    // Read through the listener: the connector from the config and status topics, its
    // offsets from the offsets topic.
    let file = env.path().join(format!("snapshots/a/{src}.yaml"));
    wait_for(
        &format!("{src}'s offsets through the IAM listener"),
        Duration::from_secs(60),
        || {
            let (code, o, e) = env.kco(&["snapshot", &src, "--dir", "snapshots"]).parts();
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            match code == 0 && text.contains(&format!("position: {len}")) {
                true => Ok(()),
                false => Err(format!("{o}{e}{text}")),
            }
        },
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("FileStreamSource"), "{text}");
    let rewound = starts[4];
    edit_and_fmt(
        &env,
        &file,
        &format!("position: {len}"),
        &format!("position: {rewound}"),
    );

    // Deleted, as MSK's console would; the rewound file written through the listener.
    drop(created);
    a.wait_gone(&src);
    let (code, o, e) = env.kco(&["apply", file.to_str().unwrap(), "--yes"]).parts();
    assert_eq!(code, 0, "{o}{e}");
    assert!(o.contains("written in topic `kco-a-offsets`"), "{o}");
    assert_secret_nowhere(&iam, &env, &format!("{o}{e}"));

    // Created again under the same name: exactly the rewound lines again.
    let _again = a.create(&src, config);
    a.wait_running(&src);
    let got = reader.wait_lines_settled(9 + 5);
    for (i, line) in lines.iter().enumerate() {
        let want = if i < 4 { 1 } else { 2 };
        assert_eq!(
            got.iter().filter(|l| *l == line).count(),
            want,
            "{line}: {got:?}"
        );
    }
    assert_eq!(got.len(), 14, "{got:?}");
}

#[test]
fn credentials_from_the_environment_read_the_offsets_topic_and_a_wrong_secret_key_is_refused_naming_them(
) {
    let Some(tb) = testbed() else { return };
    let Some(iam) = iam() else { return };
    let a = tb.a();
    let config = format!(
        "clusters:\n  a:\n    urls: [{}]\n{}    connectTopics: {{offsets: kco-a-offsets}}\n",
        tb.a_urls.join(", "),
        iam.kafka_block("")
    );
    let with_keys = |secret: &str| {
        let env = TestEnv::new().args(&["--cluster", "a"]).envs(&[
            ("AWS_ACCESS_KEY_ID", &iam.key_id),
            ("AWS_SECRET_ACCESS_KEY", secret),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ]);
        env.config(&config);
        env
    };
    let env = with_keys(&iam.secret);
    let input = env.path().join("in.txt");
    write_lines(&input, &numbered("iam-left", 0..3));
    let len = std::fs::metadata(&input).unwrap().len() as i64;
    let name = unique_name("kco-e2e-msk-iam-left");
    let src = a.create(
        &name,
        file_source_config(&input, &unique_name("kco-e2e-msk-iam")),
    );
    a.wait_read(&name, &input);
    drop(src);
    let left = wait_for(
        &format!("{name}'s leftovers through the IAM listener"),
        Duration::from_secs(60),
        || {
            let (code, out, err) = env.kco(&["ls", "--orphaned", "-o", "json"]).parts();
            if code != 0 {
                return Err(format!("{out}{err}"));
            }
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            crate::support::json::find_named(&v, "sources", &name)
                .cloned()
                .ok_or_else(|| out.clone())
        },
    );
    assert_eq!(left["partitions"][0]["offset"]["position"], len, "{left}");

    // A wrong secret key: refused at the first request, naming the broker, where the
    // credentials came from and the broker's reason; exit 1; the key nowhere.
    let wrong = format!("{}X", &iam.secret[..iam.secret.len() - 1]);
    let bad = with_keys(&wrong);
    for verbose in [false, true] {
        let args: &[&str] = if verbose {
            &["ls", "--orphaned", "-v"]
        } else {
            &["ls", "--orphaned"]
        };
        let (code, out, err) = bad.kco(args).parts();
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            err.contains(&format!("Kafka at {}", iam.kafka))
                && err.contains("the broker refused the AWS_MSK_IAM authentication")
                && err
                    .contains("environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
                && err.contains("the signature does not match")
                && err.contains("hint: check that the credentials"),
            "{err}"
        );
        assert!(!format!("{out}{err}").contains(&wrong), "{out}{err}");
        assert_secret_nowhere(&iam, &bad, &format!("{out}{err}"));
    }

    // No credentials anywhere: the chain tried, named, and a hint; exit 1.
    let none = TestEnv::new()
        .args(&["--cluster", "a"])
        .envs(&[("AWS_EC2_METADATA_DISABLED", "true")]);
    none.config(&config);
    let (code, out, err) = none.kco(&["ls", "--orphaned"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("cannot authenticate with AWS_MSK_IAM: no usable AWS credentials from AWS's default chain")
            && err.contains("profile `default` in ~/.aws/credentials or ~/.aws/config")
            && err.contains("hint: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
        "{err}"
    );
}

#[test]
fn the_brokers_validator_refuses_an_expired_token_and_one_of_another_region() {
    let Some(_tb) = testbed() else { return };
    let Some(iam) = iam() else { return };
    let now = SystemTime::now();
    let minutes = |m: u64| Duration::from_secs(60 * m);
    let topics = kco::kafka::topic_partitions(&iam.options(&iam.region, now - minutes(10)))
        .unwrap_or_else(|e| panic!("signed 10 minutes ago, 900 s to live: {e}"));
    assert!(topics.contains_key("kco-a-offsets"), "{topics:?}");
    let e = kco::kafka::topic_partitions(&iam.options(&iam.region, now - minutes(16))).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("the broker refused") && text.contains("the token expired at"),
        "{text}"
    );
    assert!(e.hint().unwrap().contains("valid and current"), "{e:?}");
    let e = kco::kafka::topic_partitions(&iam.options("us-east-1", now)).unwrap_err();
    assert!(
        e.to_string().contains(&format!(
            "signed for region us-east-1, the cluster is in {}",
            iam.region
        )),
        "{e}"
    );
}

/// A token endpoint on loopback: each request gets the next of `answers` (status, body).
fn token_endpoint(answers: Vec<(u16, String)>) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/oauth2/token", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for ((status, body), conn) in answers.into_iter().zip(listener.incoming()) {
            let mut conn = conn.unwrap();
            let mut reader = BufReader::new(conn.try_clone().unwrap());
            let mut len = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if line == "\r\n" || line.is_empty() {
                    break;
                }
            }
            let mut form = vec![0; len];
            reader.read_exact(&mut form).unwrap();
            assert_eq!(form, b"grant_type=client_credentials");
            let _ = write!(
                conn,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn oauthbearer_with_a_token_endpoint_authenticates_through_the_same_listener() {
    let Some(tb) = testbed() else { return };
    let Some(iam) = iam() else { return };
    let creds = Credentials::new(&iam.key_id, &iam.secret, None, None, "test");
    let token = kco::kafka::msk_iam::sign(&creds, &iam.region, SystemTime::now()).unwrap();
    let endpoint = token_endpoint(vec![
        (
            200,
            format!(r#"{{"access_token":"{token}","expires_in":900}}"#),
        ),
        (
            200,
            r#"{"access_token":"bm90IGEgdG9rZW4","expires_in":900}"#.into(),
        ),
        (
            401,
            r#"{"error":"invalid_client","error_description":"unknown client"}"#.into(),
        ),
    ]);
    let env = TestEnv::new()
        .args(&["--cluster", "a"])
        .envs(&[("KCO_CLIENT_SECRET", "client-s3cret")]);
    env.config(format!(
        "clusters:\n  a:\n    urls: [{}]\n    kafka:\n      bootstrap: \"{}\"\n      sasl: {{mechanism: OAUTHBEARER, tokenEndpoint: \"{endpoint}\", clientId: kco, clientSecret: \"${{env:KCO_CLIENT_SECRET}}\"}}\n    connectTopics: {{offsets: kco-a-offsets}}\n",
        tb.a_urls.join(", "),
        iam.kafka
    ));
    let (code, out, err) = env.kco(&["ls", "--orphaned"]).parts();
    assert_eq!(code, 0, "{out}{err}");
    // The endpoint's next token is not MSK's: the broker refuses it.
    let (code, out, err) = env.kco(&["ls", "--orphaned"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!(
            "the broker refused the SASL OAUTHBEARER authentication with the token of {endpoint} (client `kco`)"
        )) && err.contains("invalid_token"),
        "{err}"
    );
    // Then it refuses the client.
    let (code, out, err) = env.kco(&["ls", "--orphaned"]).parts();
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains(&format!("token endpoint {endpoint}: HTTP 401"))
            && err.contains("invalid_client: unknown client"),
        "{err}"
    );
    assert!(
        !format!("{out}{err}").contains("client-s3cret"),
        "{out}{err}"
    );
}
