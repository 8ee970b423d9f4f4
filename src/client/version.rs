//! Connect versions: parsing `GET /` and what each version supports.

use std::fmt;

/// An Apache Kafka version, mapped from Confluent Platform `-ccs` builds where needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ConnectVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl ConnectVersion {
    /// Reading offsets (`GET .../offsets`) and `PUT .../stop`.
    pub const OFFSETS_READ: Self = Self::new(3, 5, 0);
    /// Altering and resetting offsets (`PATCH`/`DELETE .../offsets`).
    pub const OFFSETS_WRITE: Self = Self::new(3, 6, 0);
    /// `initial_state` on create (KIP-980).
    pub const INITIAL_STATE: Self = Self::new(3, 7, 0);
    /// A managed service that reports no version (no `GET /`: Confluent Cloud): every
    /// endpoint its contract lists is there, so it passes every version check.
    pub const MANAGED: Self = Self::new(u32::MAX, 0, 0);

    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Self {
            major,
            minor,
            patch,
        }
    }

    /// Parses `4.1.0`, `3.7.2-SNAPSHOT`, or a Confluent Platform build (`7.6.1-ccs`,
    /// `7.6.1-ce`, or a bare 7.x/8.x), mapped to the Apache Kafka release it ships:
    /// CP 7.m is AK 3.m (7.4 = 3.4 ... 7.9 = 3.9) and CP 8.m is AK 4.m. A Confluent line
    /// whose Apache release is not known (9.x) does not parse.
    pub fn parse(raw: &str) -> Option<Self> {
        let ccs = raw.contains("-ccs") || raw.contains("-ce");
        let core = raw.split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| p.parse::<u32>().ok());
        let major = parts.next()??;
        let minor = parts.next().flatten().unwrap_or(0);
        let patch = parts.next().flatten().unwrap_or(0);
        if ccs || major >= 5 {
            // Confluent Platform numbering.
            return match major {
                7 => Some(Self::new(3, minor, patch)),
                8 => Some(Self::new(4, minor, patch)),
                _ if ccs => None,
                _ => Some(Self::new(major, minor, patch)),
            };
        }
        Some(Self::new(major, minor, patch))
    }
}

impl fmt::Display for ConnectVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_apache_and_confluent_versions() {
        assert_eq!(
            ConnectVersion::parse("4.1.0"),
            Some(ConnectVersion::new(4, 1, 0))
        );
        assert_eq!(
            ConnectVersion::parse("3.7.2-SNAPSHOT"),
            Some(ConnectVersion::new(3, 7, 2))
        );
        assert_eq!(
            ConnectVersion::parse("7.6.1-ccs"),
            Some(ConnectVersion::new(3, 6, 1))
        );
        assert_eq!(
            ConnectVersion::parse("8.0.0-ccs"),
            Some(ConnectVersion::new(4, 0, 0))
        );
        assert_eq!(ConnectVersion::parse("garbage"), None);
        assert!(ConnectVersion::parse("3.4.1").unwrap() < ConnectVersion::OFFSETS_READ);
        assert!(ConnectVersion::parse("7.5.0-ccs").unwrap() >= ConnectVersion::OFFSETS_READ);
    }

    #[test]
    fn confluent_lines_map_to_their_apache_release() {
        let cases = [
            ("7.4.0-ccs", (3, 4, 0)),
            ("7.7.1-ccs", (3, 7, 1)),
            ("7.9.0-ccs", (3, 9, 0)),
            ("8.1.0-ccs", (4, 1, 0)),
            ("7.6.1-ce", (3, 6, 1)),
            ("7.8.0", (3, 8, 0)), // a bare Confluent number
            ("3.6", (3, 6, 0)),
            ("4.3.1+build.7", (4, 3, 1)),
        ];
        for (raw, (major, minor, patch)) in cases {
            assert_eq!(
                ConnectVersion::parse(raw),
                Some(ConnectVersion::new(major, minor, patch)),
                "{raw}"
            );
        }
        for raw in ["9.0.0-ccs", "", "-ccs", "x.1.2"] {
            assert_eq!(ConnectVersion::parse(raw), None, "{raw}");
        }
    }

    #[test]
    fn feature_thresholds_follow_the_kips() {
        let v = |raw| ConnectVersion::parse(raw).unwrap();
        // KIP-875: reading offsets and stop in 3.5, altering and resetting in 3.6.
        assert!(v("3.5.0") >= ConnectVersion::OFFSETS_READ);
        assert!(v("3.5.2") < ConnectVersion::OFFSETS_WRITE);
        assert!(v("7.5.3-ccs") < ConnectVersion::OFFSETS_WRITE);
        assert!(v("3.6.0") >= ConnectVersion::OFFSETS_WRITE);
        assert!(v("7.6.0-ccs") >= ConnectVersion::OFFSETS_WRITE);
        // KIP-980: `initial_state` in 3.7.
        assert!(v("3.6.2") < ConnectVersion::INITIAL_STATE);
        assert!(v("7.7.0-ccs") >= ConnectVersion::INITIAL_STATE);
        assert_eq!(ConnectVersion::new(3, 10, 0).to_string(), "3.10.0");
        assert!(ConnectVersion::new(3, 10, 0) > ConnectVersion::new(3, 9, 9));
    }
}
