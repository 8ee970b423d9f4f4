//! Snapshot files through git history: `kco log`, `kco show --at`, and the inputs of
//! `apply --at` and `apply --changed-since`. Git is read with libgit2 (`engine::revision`).

pub mod at;
pub mod delta;
pub mod had;
pub mod log;
pub mod mark;
pub mod record;
pub mod trailer;
pub mod version;
pub mod walk;
pub mod when;

pub use log::{log, LogInput, LogReport};
pub use when::resolve_at;
