//! The table: its types (as `schemas/shapes.yaml` spells them), the built-in table and the
//! user's entries, the shapes in force for the process, and the checks of a table's entries.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::ConnectorType;

/// The built-in table's text, as committed.
pub const BUILTIN: &str = include_str!("../../schemas/shapes.yaml");
pub const KIND: &str = "OffsetShapes";

/// A table of shapes, as `schemas/shapes.yaml` (or a file named by `shapesFile:`) holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "kco OffsetShapes v1")]
pub struct ShapeTable {
    /// Always `kco/v1`.
    #[schemars(extend("const" = "kco/v1"))]
    pub api_version: String,
    /// Always `OffsetShapes`.
    #[schemars(extend("const" = "OffsetShapes"))]
    pub kind: String,
    pub shapes: Vec<Shape>,
}

/// One connector class's offsets (or, with `type: sink` and no class, every sink's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Shape {
    /// The `connector.class` this entry describes; omitted only for `type: sink`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// `source` (default) or `sink`.
    #[serde(default = "source", rename = "type")]
    pub connector_type: ConnectorType,
    /// A name for people: `Debezium PostgreSQL`.
    pub title: String,
    /// Where the shape comes from: the connector's source file (URL).
    pub source: String,
    /// Source-partition keys.
    pub partition: BTreeMap<String, FieldSpec>,
    /// Offset keys. A key ending in `*` stands for every key with that prefix.
    pub offset: BTreeMap<String, FieldSpec>,
    /// At least one of these partition keys must be present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_any_of: Vec<String>,
    /// At least one of these offset keys must be present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offset_any_of: Vec<String>,
    /// The offset fields that order two offsets, compared in turn (empty: no order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// The order field whose difference is the distance [default: the last of `order`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<String>,
    /// What the distance counts (`bytes`, `records`) [default: the distance field's name].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// How a position reads, as templates: `{field}` or `{field:format}` with the formats
    /// `pg-lsn`, `epoch-s`, `epoch-ms`, `epoch-us`; a template whose fields are missing is left
    /// out, the rest are joined with `, `.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readable: Vec<String>,
}

impl Shape {
    /// `offset`'s position as the database's tools show it, where the entry says how.
    pub fn readable(&self, offset: &crate::model::Fields) -> Option<String> {
        super::readable::readable(&self.readable, offset)
    }
}

fn source() -> ConnectorType {
    ConnectorType::Source
}

/// One key's rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldSpec {
    /// The JSON type(s) the value may have.
    #[serde(rename = "type")]
    pub types: Types,
    /// The key must be present.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// `null` is allowed too.
    #[serde(default, skip_serializing_if = "is_false")]
    pub nullable: bool,
    /// A string must not be empty.
    #[serde(default, skip_serializing_if = "is_false")]
    pub non_empty: bool,
    /// The smallest value (integers, and `decimal` strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<i64>,
    /// The largest value (integers, and `decimal` strings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<i64>,
    /// What a string value must look like, and how it orders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One JSON type, or a list of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Types {
    One(ValueType),
    Many(Vec<ValueType>),
}

impl Types {
    pub fn list(&self) -> &[ValueType] {
        match self {
            Types::One(t) => std::slice::from_ref(t),
            Types::Many(v) => v,
        }
    }
}

/// A JSON type of an offset value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    String,
    /// A whole number (Connect stores it as a long).
    Integer,
    /// Any number.
    Number,
    Boolean,
}

/// The form of a string value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Decimal digits (an Oracle SCN, a MySQL position written as a string); orders as a number.
    Decimal,
    /// A MySQL binlog file name, `<stem>.<number>`; orders by the number.
    BinlogFile,
    /// A SQL Server LSN, `0000002a:00000dc0:0003` (hex), or `NULL`.
    SqlserverLsn,
}

/// The shapes in force: the user's entries first (they override the built-in ones of the same
/// class), then the built-in table.
#[derive(Debug, Clone)]
pub struct Shapes {
    entries: Vec<Shape>,
}

/// Why a table could not be read: the entry (class) or line, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", line.map(|l| format!("line {l}: ")).unwrap_or_default())]
pub struct TableError {
    pub line: Option<usize>,
    pub message: String,
}

impl Shapes {
    /// The built-in table alone.
    pub fn builtin() -> &'static Shapes {
        static BUILT_IN: OnceLock<Shapes> = OnceLock::new();
        BUILT_IN.get_or_init(|| Shapes {
            entries: parse_table(BUILTIN).expect("schemas/shapes.yaml is valid (a test says so)"),
        })
    }

    /// The built-in table with `user`'s entries added; an entry of the same type and class
    /// replaces the built-in one.
    pub fn with_user(user: Vec<Shape>) -> Shapes {
        let mut entries = user;
        for b in &Shapes::builtin().entries {
            if !entries.iter().any(|u| same_target(u, b)) {
                entries.push(b.clone());
            }
        }
        Shapes { entries }
    }

    /// Every entry, the user's first.
    pub fn entries(&self) -> &[Shape] {
        &self.entries
    }

    /// The shape of a connector's offsets: every sink has the sink shape; a source has its
    /// class's, if the table knows it.
    pub fn find(&self, connector_type: ConnectorType, class: Option<&str>) -> Option<&Shape> {
        match connector_type {
            ConnectorType::Sink => self
                .entries
                .iter()
                .find(|s| s.connector_type == ConnectorType::Sink && s.class.is_none()),
            ConnectorType::Source => {
                let class = class?;
                self.entries.iter().find(|s| {
                    s.connector_type == ConnectorType::Source && s.class.as_deref() == Some(class)
                })
            }
        }
    }

    /// The table as a document (`kco schema --shapes`).
    pub fn table(&self) -> ShapeTable {
        ShapeTable {
            api_version: crate::model::file::API_VERSION.into(),
            kind: KIND.into(),
            shapes: self.entries.clone(),
        }
    }
}

fn same_target(a: &Shape, b: &Shape) -> bool {
    a.connector_type == b.connector_type && a.class == b.class
}

/// The shapes every command uses for ordering and rendering: those [`install`]ed (the
/// built-in table and the config's entries), else the built-in table.
pub fn registry() -> &'static Shapes {
    REGISTRY.get().unwrap_or_else(|| Shapes::builtin())
}

static REGISTRY: OnceLock<Shapes> = OnceLock::new();

/// Sets the shapes in force for this process, once (the CLI does it after reading kco.yaml).
pub fn install(shapes: Shapes) {
    let _ = REGISTRY.set(shapes);
}

/// Parses a table document (`apiVersion: kco/v1`, `kind: OffsetShapes`) and checks its
/// entries.
pub fn parse_table(text: &str) -> Result<Vec<Shape>, TableError> {
    let table: ShapeTable = serde_yaml::from_str(text).map_err(|e| TableError {
        line: e.location().map(|l| l.line()),
        message: e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or_default()
            .to_string(),
    })?;
    if table.api_version != crate::model::file::API_VERSION || table.kind != KIND {
        return Err(TableError {
            line: Some(1),
            message: format!(
                "a shapes table is `apiVersion: {}` and `kind: {KIND}`",
                crate::model::file::API_VERSION
            ),
        });
    }
    check_entries(&table.shapes, text)?;
    Ok(table.shapes)
}

/// Checks entries that parsed: a class for every source entry, order and readable fields that
/// exist, one entry per class. `text` is where they came from, to point at a line.
pub fn check_entries(shapes: &[Shape], text: &str) -> Result<(), TableError> {
    let mut seen = std::collections::BTreeSet::new();
    for s in shapes {
        let name = s.class.as_deref().unwrap_or("(every sink)");
        let err = |message: String| TableError {
            line: s.class.as_deref().and_then(|c| {
                text.lines()
                    .position(|l| l.contains("class:") && l.contains(c))
                    .map(|i| i + 1)
            }),
            message: format!("shape `{name}`: {message}"),
        };
        if s.connector_type == ConnectorType::Source && s.class.is_none() {
            return Err(err("a source entry needs `class`".into()));
        }
        if s.connector_type == ConnectorType::Sink && s.class.is_some() {
            return Err(err(
                "a sink entry has no `class`: every sink's offsets have Connect's shape".into(),
            ));
        }
        if !seen.insert((s.connector_type, s.class.clone())) {
            return Err(err("listed twice".into()));
        }
        for f in &s.order {
            if !s.offset.contains_key(f) || f.ends_with('*') {
                return Err(err(format!(
                    "`order` names `{f}`, which is not an offset key"
                )));
            }
        }
        if let Some(d) = &s.distance {
            if !s.order.contains(d) {
                return Err(err(format!(
                    "`distance` names `{d}`, which is not in `order`"
                )));
            }
        }
        for k in &s.partition_any_of {
            if !s.partition.contains_key(k) {
                return Err(err(format!(
                    "`partitionAnyOf` names `{k}`, which is not a partition key"
                )));
            }
        }
        for k in &s.offset_any_of {
            if !s.offset.contains_key(k) {
                return Err(err(format!(
                    "`offsetAnyOf` names `{k}`, which is not an offset key"
                )));
            }
        }
        for t in &s.readable {
            super::readable::check_template(t, |k| s.offset.contains_key(k))
                .map_err(|m| err(format!("`readable` `{t}`: {m}")))?;
        }
    }
    Ok(())
}
