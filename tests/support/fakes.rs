//! Fake Connect setups that several test files start the same way.

use serde_json::{json, Value};

pub use kco::fake::{FakeConnect, FakeConnectBuilder, State};

use super::data::{sink_offset, sink_offsets, source_offsets, SINK, SOURCE, TRICKY_SOURCE};

/// Source offsets with values a YAML writer could get wrong.
pub fn tricky_source_offsets() -> Value {
    json!([
        {"partition": {"filename": "/data/in.txt"}, "offset": {"position": 9007199254740993_i64}},
        {"partition": {"server": "db:3306", "file.name": "yes"},
         "offset": {"file": "0123", "pos": 18446744073709551615_u64, "ts": 1.0, "gtid": null,
                    "snapshot": true, "when": "2024-01-01", "neg": -9223372036854775808_i64,
                    "big": 1e300, "on": "on", "empty": "", "nul": "null"}}
    ])
}

/// `orders-sink`'s offsets: partition 10 of `orders` at `n`, partition 2 at 3 (listed out of
/// order).
pub fn orders_sink_offsets(n: i64) -> Value {
    sink_offsets("orders", &[(10, n), (2, 3)])
}

/// A running source `file-src` of a class kco has no shape for ([`tricky_source_offsets`]) and a stopped sink `orders-sink`
/// ([`orders_sink_offsets`] at 5), on Kafka cluster `kc-test`.
pub fn two_connectors() -> FakeConnect {
    FakeConnect::builder()
        .kafka_cluster_id("kc-test")
        .source(
            "file-src",
            TRICKY_SOURCE,
            State::Running,
            tricky_source_offsets(),
        )
        .sink("orders-sink", SINK, State::Stopped, orders_sink_offsets(5))
        .start()
}

/// A running source `billing` (position 9) and a running sink `orders` (topic `orders`,
/// partitions 0 and 1 at 1500 and 700), on Kafka cluster `kc-test`.
pub fn billing_and_orders() -> FakeConnect {
    billing_in(State::Running)
        .kafka_cluster_id("kc-test")
        .start()
}

/// A fake (not started) with a source `billing` in `state` (position 9) and a running sink
/// `orders` (topic `orders`, partitions 0 and 1 at 1500 and 700): where the output tests
/// start from.
pub fn billing_in(state: State) -> FakeConnectBuilder {
    FakeConnect::builder()
        .source("billing", SOURCE, state, source_offsets(9))
        .sink(
            "orders",
            SINK,
            State::Running,
            sink_offsets("orders", &[(0, 1500), (1, 700)]),
        )
}

/// A fake (not started) with one sink `s` in `state`, partition 0 of topic `t` at 100.
pub fn sink_s(state: State) -> FakeConnectBuilder {
    FakeConnect::builder().sink("s", SINK, state, sink_offset(100))
}
