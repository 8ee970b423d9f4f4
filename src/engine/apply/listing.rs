//! The live listing an apply plans from, with the connectors Connect's listing leaves out.

use std::collections::{BTreeMap, BTreeSet};

use super::plan::Want;
use crate::client::{Connect, ConnectorListing};
use crate::error::{Error, Result};

/// How often the listing is read again while a wanted connector exists but is not in it.
const RELISTS: usize = 3;
/// The pause before each new read.
const RELIST_PAUSE: std::time::Duration = std::time::Duration::from_millis(500);

/// The expanded listing, and the wanted connectors that exist but are not in it.
///
/// Connect's `GET /connectors?expand=...` leaves out a connector whose status or config this
/// worker cannot read yet (one created a moment ago, or during a rebalance): taken at its
/// word, an existing connector would be planned as one to create. When a wanted connector is
/// not in it, the plain `GET /connectors` (the names, from the same configs, no expansion)
/// says whether it exists; while one does, the expanded listing is read again. Those still
/// left out are returned, to be refused rather than created.
pub(super) fn list_wanted(
    client: &Connect,
    cluster: &str,
    wants: &[Want],
) -> Result<(BTreeMap<String, ConnectorListing>, BTreeSet<String>)> {
    let failed = |e| Error::client(format!("cannot list connectors of `{cluster}`"), e);
    let mut listing = client.list_connectors().map_err(failed)?;
    for attempt in 0..=RELISTS {
        let absent: Vec<&str> = wants
            .iter()
            .map(Want::target)
            .filter(|n| !listing.contains_key(*n))
            .collect();
        if absent.is_empty() {
            return Ok((listing, BTreeSet::new()));
        }
        let names: BTreeSet<String> = client
            .connector_names()
            .map_err(failed)?
            .into_iter()
            .collect();
        let unlisted: BTreeSet<String> = absent
            .into_iter()
            .filter(|n| names.contains(*n))
            .map(str::to_string)
            .collect();
        if unlisted.is_empty() || attempt == RELISTS {
            return Ok((listing, unlisted));
        }
        std::thread::sleep(RELIST_PAUSE);
        listing = client.list_connectors().map_err(failed)?;
    }
    unreachable!("the last attempt returns")
}
