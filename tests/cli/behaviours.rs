//! The behavioural suite (`support::behaviours`) on the fake, over HTTP: in Kafka Connect mode,
//! and in Confluent Cloud mode (the stand-in of its contract). tests/e2e runs the same list on
//! the real workers.

use serde_json::{json, Value};

use crate::fake_connect::{FakeConnect, Fault, State};
use crate::support::behaviours::{run, Behaviour, Kind};
use crate::support::data::SOURCE;
use crate::support::env::TestEnv;

const ENV: &str = "env-abc123";
const LKC: &str = "lkc-xyz789";

fn position(at: i64) -> Vec<Value> {
    vec![json!({"partition": {"filename": "/data/in.txt"}, "offset": {"position": at}})]
}

/// The fake with a RUNNING FileStream source `src` at 1000, as cluster `a` of kco.yaml.
struct Fake {
    fake: FakeConnect,
    env: TestEnv,
    cloud: bool,
}

impl Fake {
    fn connect() -> Fake {
        let fake = FakeConnect::builder()
            .source("src", SOURCE, State::Running, json!(position(1000)))
            .start();
        let env = TestEnv::new().args(&["--cluster", "a"]);
        env.config(format!("clusters:\n  a:\n    urls: [{}]\n", fake.url()));
        Fake {
            fake,
            env,
            cloud: false,
        }
    }

    fn cloud() -> Fake {
        let fake = FakeConnect::builder()
            .confluent_cloud(ENV, LKC)
            .api_key("KEY", "SECRET")
            .source("src", SOURCE, State::Running, json!(position(1000)))
            .start();
        let env = TestEnv::new()
            .envs(&[("CC_KEY", "KEY"), ("CC_SECRET", "SECRET")])
            .args(&["--cluster", "a"]);
        env.config(format!(
            "clusters:\n  a:\n    confluentCloud:\n      environment: {ENV}\n      kafkaCluster: {LKC}\n      apiKey: ${{env:CC_KEY}}\n      apiSecret: ${{env:CC_SECRET}}\n      endpoint: {}\n",
            fake.url()
        ));
        Fake {
            fake,
            env,
            cloud: true,
        }
    }
}

impl Fake {
    /// Each step `kco -v apply` prints, and the request after it, held for the kill to land
    /// there (counted from the spawn: the plan reads the offsets once, the status is read once
    /// before the first step and twice by each wait for a state).
    fn holds(&self) -> Vec<(&'static str, Fault)> {
        let on = |method, tail: &str, nth| {
            Fault::on(method, &format!("*/connectors/src{tail}")).nth(nth)
        };
        match self.cloud {
            true => vec![
                (": record_state ok", on("POST", "/offsets/request", 1)),
                (": patch ok", on("GET", "/offsets/request/status", 1)),
                (": wait_applied ok", on("GET", "/offsets", 2)),
                (": verify ok", on("GET", "/status", 2)),
                (": wait_restored ok", on("GET", "/status", 3)),
            ],
            false => vec![
                (": record_state ok", on("PUT", "/stop", 1)),
                (": stop ok", on("GET", "/status", 2)),
                (": wait_stopped ok", on("PATCH", "/offsets", 1)),
                (": patch ok", on("GET", "/offsets", 2)),
                (": verify ok", on("PUT", "/resume", 1)),
                (": restore ok", on("GET", "/status", 4)),
                (": wait_restored ok", on("GET", "/status", 6)),
            ],
        }
    }
}

impl Kind for Fake {
    fn name(&self) -> &str {
        match self.cloud {
            true => "the fake as Confluent Cloud",
            false => "the fake as Kafka Connect",
        }
    }

    fn env(&self) -> &TestEnv {
        &self.env
    }

    fn cluster(&self) -> &str {
        "a"
    }

    fn connector(&self) -> &str {
        "src"
    }

    fn offsets(&self) -> Vec<Value> {
        self.fake
            .offsets("src")
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    fn state(&self) -> Option<String> {
        self.fake.state("src").map(|s| s.as_str().to_string())
    }

    fn moved(&self, n: u64) -> Vec<Value> {
        position(1000 - 10 * n as i64)
    }

    fn delete(&self) {
        assert!(self.fake.remove_connector("src"));
    }

    fn lacks(&self, b: Behaviour) -> Option<&str> {
        match b {
            Behaviour::RefusesRunning => Some("it stops a connector (or the service pauses it)"),
            Behaviour::Orphaned => {
                Some("no Kafka: a deleted connector's offsets are nowhere kco reads")
            }
            _ => None,
        }
    }

    fn steps(&self) -> Vec<&str> {
        self.holds().into_iter().map(|(step, _)| step).collect()
    }

    fn hold(&self, step: &str) {
        let (_, fault) = self.holds().into_iter().find(|(s, _)| *s == step).unwrap();
        self.fake.fault(fault.delay_ms(5_000).drop_connection());
    }

    fn release(&self) {
        self.fake.clear_faults();
    }
}

#[test]
fn the_fake_as_kafka_connect_behaves() {
    run(&Fake::connect());
}

#[test]
fn the_fake_as_confluent_cloud_behaves() {
    run(&Fake::cloud());
}
