//! The end offsets of topic partitions (the offset the next record written gets): how far a
//! sink's committed offsets are behind its topics (`engine::metrics`' sink lag).

use std::collections::{BTreeMap, BTreeSet};

use rskafka::client::partition::{OffsetAt, UnknownTopicHandling};

use super::{ask, connect, runtime, KafkaError, KafkaOptions};

/// Each partition's end offset, one connection for all; a partition Kafka does not have is
/// left out (a topic deleted since the sink committed to it).
pub fn end_offsets(
    opts: &KafkaOptions,
    partitions: &BTreeSet<(String, i32)>,
) -> Result<BTreeMap<(String, i32), i64>, KafkaError> {
    if partitions.is_empty() {
        return Ok(BTreeMap::new());
    }
    runtime(opts)?.block_on(async {
        let client = connect(opts).await?;
        let mut ends = BTreeMap::new();
        for (topic, partition) in partitions {
            let part = match ask(
                opts,
                topic,
                "finding the partition's leader",
                client.partition_client(topic.as_str(), *partition, UnknownTopicHandling::Error),
            )
            .await
            {
                Ok(p) => p,
                Err(KafkaError::UnknownTopic { .. }) => continue,
                Err(e) => return Err(e),
            };
            let end = ask(
                opts,
                topic,
                "reading the end offset",
                part.get_offset(OffsetAt::Latest),
            )
            .await?;
            ends.insert((topic.clone(), *partition), end);
        }
        Ok(ends)
    })
}
