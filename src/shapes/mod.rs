//! Offset shapes per connector class: which keys a connector's partitions and offsets have,
//! their types, which of them order an offset (and in what unit), and how a position reads.
//!
//! The built-in table is data, `schemas/shapes.yaml`, embedded at build time; `kco.yaml` adds
//! or overrides entries in the same format (`shapes:` or `shapesFile:`). One entry gives a
//! class its checks ([`check`]), its order ([`order`]) and its readable positions
//! ([`readable`]). Pure: no I/O beyond parsing the text it is given.

pub mod check;
pub mod order;
pub mod readable;
mod table;
#[cfg(test)]
mod tests;
pub mod value;

pub use table::{
    check_entries, install, parse_table, registry, FieldSpec, Format, Shape, ShapeTable, Shapes,
    TableError, Types, ValueType, BUILTIN, KIND,
};
