//! The conformance suite (`support::conformance`) against the real worker: cluster a of the
//! test bed through kco's own Kafka Connect client, on each Kafka release the e2e run covers.
//! tests/cli holds the fake's Connect mode to the same suite, so what it passes there Connect
//! itself passes here.

use std::collections::BTreeMap;
use std::time::Duration;

use kco::client::layers::{RetryPolicy, Retrying};
use kco::client::{Connect, HttpOptions, HttpTransport, TlsOptions};
use serde_json::json;

use crate::harness::{
    file_source_config, numbered, source_position, temp_dir, testbed, unique_name, write_lines,
};
use crate::support::conformance::{run, Subject};

#[test]
fn the_real_worker_conforms() {
    let Some(tb) = testbed() else { return };
    let a = tb.a();
    let work = temp_dir();
    let input = work.path().join("in.txt");
    write_lines(&input, &numbered("line", 0..20));
    let id = unique_name("kco-e2e-conform");
    let (src, topic) = (format!("{id}-src"), format!("{id}-topic"));
    let _src = a.create(&src, file_source_config(&input, &topic));
    let total = std::fs::metadata(&input).unwrap().len() as i64;
    a.wait_offsets(&src, "the source at the end of its file", |o| {
        source_position(o, &input) == Some(total)
    });
    a.wait_running(&src);
    let http = HttpTransport::new(HttpOptions {
        urls: vec![a.base.clone()],
        auth: None,
        headers: BTreeMap::new(),
        timeout: Duration::from_secs(30),
        tls: TlsOptions::default(),
    })
    .unwrap();
    // As kco talks to it: a rebalance (a 409 right after a stop) is waited out and retried.
    let service = Connect::new(Retrying::new(http, RetryPolicy::default()));
    let file = input.to_str().unwrap();
    let rewound = json!([{"partition": {"filename": file}, "offset": {"position": 0}}]);
    let config = |name: &str| -> BTreeMap<String, String> {
        let path = work.path().join(format!("{name}.txt"));
        std::fs::write(&path, "one\n").unwrap();
        serde_json::from_value(file_source_config(&path, &topic)).unwrap()
    };
    run(&Subject {
        service: &service,
        connector: &src,
        rewound: serde_json::from_value(rewound).unwrap(),
        config: &config,
        patience: Duration::from_secs(60),
    });
}
