//! kco: Kafka Connect offsets as code.
//!
//! The library is the silent core: it never prints. `cli` parses flags, resolves settings,
//! calls the commands and renders their reports.

pub mod aws;
pub mod cli;
pub mod client;
pub mod clock;
pub mod compare;
pub mod config;
pub mod engine;
pub mod error;
#[cfg(any(test, feature = "fake"))]
pub mod fake;
pub mod fsutil;
pub mod kafka;
pub mod model;
#[cfg(unix)]
pub mod owner;
pub mod services;
pub mod shapes;
pub mod shown_path;
pub mod text;
pub mod wait;
