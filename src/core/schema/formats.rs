//! String formats validated by the API server for CRD schemas
//! (apiextensions-apiserver `pkg/apiserver/validation/formats.go`, checks from
//! kube-openapi `pkg/validation/strfmt`). Formats that are not supported there
//! are ignored, as the API server strips them; a few supported but exotic ones
//! (isbn, creditcard, ssn, rgbcolor, bsonobjectid) are accepted without checks.

use crate::api::duration::parse_go;
use crate::api::names::{is_dns1123_label, is_dns1123_subdomain};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    DateTime,
    Date,
    Duration,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Byte,
    Email,
    Hostname,
    Uri,
    HexColor,
    K8sShortName,
    K8sLongName,
    /// Supported by Kubernetes but not checked here (lenient).
    Unchecked(&'static str),
}

impl Format {
    /// The format for a schema's `format` value (go-openapi normalisation:
    /// dashes removed); `None` for formats Kubernetes ignores.
    pub(super) fn from_name(name: &str) -> Option<Format> {
        let norm: String = name.chars().filter(|c| *c != '-').collect();
        Some(match norm.as_str() {
            "datetime" => Format::DateTime,
            "date" => Format::Date,
            "duration" => Format::Duration,
            "uuid" => Format::Uuid,
            "uuid3" => Format::Uuid3,
            "uuid4" => Format::Uuid4,
            "uuid5" => Format::Uuid5,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "cidr" => Format::Cidr,
            "mac" => Format::Mac,
            "byte" => Format::Byte,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "uri" => Format::Uri,
            "hexcolor" => Format::HexColor,
            "k8sshortname" => Format::K8sShortName,
            "k8slongname" => Format::K8sLongName,
            "password" => Format::Unchecked("password"),
            "isbn" => Format::Unchecked("isbn"),
            "isbn10" => Format::Unchecked("isbn10"),
            "isbn13" => Format::Unchecked("isbn13"),
            "creditcard" => Format::Unchecked("creditcard"),
            "ssn" => Format::Unchecked("ssn"),
            "rgbcolor" => Format::Unchecked("rgbcolor"),
            "bsonobjectid" => Format::Unchecked("bsonobjectid"),
            _ => return None,
        })
    }

    /// The name used in messages (`must be of type date-time`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Format::DateTime => "date-time",
            Format::Date => "date",
            Format::Duration => "duration",
            Format::Uuid => "uuid",
            Format::Uuid3 => "uuid3",
            Format::Uuid4 => "uuid4",
            Format::Uuid5 => "uuid5",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
            Format::Cidr => "cidr",
            Format::Mac => "mac",
            Format::Byte => "byte",
            Format::Email => "email",
            Format::Hostname => "hostname",
            Format::Uri => "uri",
            Format::HexColor => "hexcolor",
            Format::K8sShortName => "k8s-short-name",
            Format::K8sLongName => "k8s-long-name",
            Format::Unchecked(n) => n,
        }
    }

    pub(super) fn check(self, s: &str) -> bool {
        match self {
            Format::DateTime => is_date_time(s),
            Format::Date => is_date(s),
            Format::Duration => is_duration(s),
            Format::Uuid => is_uuid(s, None),
            Format::Uuid3 => is_uuid(s, Some(b'3')),
            Format::Uuid4 => is_uuid(s, Some(b'4')),
            Format::Uuid5 => is_uuid(s, Some(b'5')),
            Format::Ipv4 => s.parse::<std::net::Ipv4Addr>().is_ok() && !s.contains(':'),
            Format::Ipv6 => s.parse::<std::net::Ipv6Addr>().is_ok(),
            Format::Cidr => is_cidr(s),
            Format::Mac => is_mac(s),
            Format::Byte => is_base64(s),
            Format::Email => is_email(s),
            Format::Hostname => is_hostname(s),
            Format::Uri => is_request_uri(s),
            Format::HexColor => is_hex_color(s),
            Format::K8sShortName => is_dns1123_label(s),
            Format::K8sLongName => is_dns1123_subdomain(s),
            Format::Unchecked(_) => true,
        }
    }
}

fn digits(b: &[u8]) -> bool {
    !b.is_empty() && b.iter().all(u8::is_ascii_digit)
}

fn num(b: &[u8]) -> u32 {
    b.iter().fold(0, |a, d| a * 10 + u32::from(d - b'0'))
}

/// Go `time.Parse("2006-01-02", s)`.
pub(super) fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    if !digits(&b[0..4]) || !digits(&b[5..7]) || !digits(&b[8..10]) {
        return false;
    }
    let (y, m, d) = (num(&b[0..4]), num(&b[5..7]), num(&b[8..10]));
    if !(1..=12).contains(&m) || d == 0 {
        return false;
    }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let dim = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    d <= dim
}

/// kube-openapi `strfmt.IsDateTime`: date, `t`/`T`, then
/// `^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$`
/// (case-insensitive), hour <= 23, minute/second <= 59.
pub(super) fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_ascii_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let b = time.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    if !digits(&b[0..2]) || !digits(&b[3..5]) || !digits(&b[6..8]) {
        return false;
    }
    let mut rest = &b[8..];
    if rest.len() > 1 && rest[0] != b'z' && rest[0] != b'+' && rest[0] != b'-' {
        // `(.[0-9]+)?`: any single char then digits
        let frac_len = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if frac_len > 0 {
            rest = &rest[1 + frac_len..];
        }
    }
    let zone_ok = rest == b"z"
        || (rest.len() == 6
            && (rest[0] == b'+' || rest[0] == b'-')
            && digits(&rest[1..3])
            && rest[3] == b':'
            && digits(&rest[4..6]));
    zone_ok && num(&b[0..2]) <= 23 && num(&b[3..5]) <= 59 && num(&b[6..8]) <= 59
}

/// Go `time.ParseDuration`, or the kube-openapi fallback (`\d+\s*unit`).
fn is_duration(s: &str) -> bool {
    if parse_go(s).is_ok() {
        return true;
    }
    // fallback: at least one `<digits><spaces><letters>` with a known unit prefix
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            let unit: String = s[j..]
                .chars()
                .take_while(|c| c.is_ascii_alphabetic() || *c == 'µ')
                .collect::<String>()
                .to_lowercase();
            if !unit.is_empty()
                && [
                    "ns", "us", "µs", "ms", "s", "m", "h", "d", "w", "n", "u", "µ",
                ]
                .iter()
                .any(|u| unit.starts_with(u))
            {
                return true;
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    false
}

fn is_uuid(s: &str, version: Option<u8>) -> bool {
    // (?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?V[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$
    let b: Vec<u8> = s.bytes().collect();
    let groups = [8usize, 4, 4, 4, 12];
    let mut i = 0;
    let mut hex = Vec::with_capacity(32);
    for (g, len) in groups.iter().enumerate() {
        if g > 0 && i < b.len() && b[i] == b'-' {
            i += 1;
        }
        if i + len > b.len() || !b[i..i + len].iter().all(u8::is_ascii_hexdigit) {
            return false;
        }
        hex.extend_from_slice(&b[i..i + len]);
        i += len;
    }
    if i != b.len() {
        return false;
    }
    match version {
        None => true,
        Some(v) => {
            hex[12] == v
                && (v == b'3' || matches!(hex[16].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b'))
        }
    }
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(bits) = bits.parse::<u8>() else {
        return false;
    };
    if ip.parse::<std::net::Ipv4Addr>().is_ok() {
        bits <= 32
    } else if ip.parse::<std::net::Ipv6Addr>().is_ok() {
        bits <= 128
    } else {
        false
    }
}

fn is_mac(s: &str) -> bool {
    // net.ParseMAC: 6, 8 or 20 octets separated by ':' or '-', or dotted quads
    for sep in [':', '-'] {
        let parts: Vec<&str> = s.split(sep).collect();
        if matches!(parts.len(), 6 | 8 | 20)
            && parts
                .iter()
                .all(|p| p.len() == 2 && p.bytes().all(|c| c.is_ascii_hexdigit()))
        {
            return true;
        }
    }
    let parts: Vec<&str> = s.split('.').collect();
    matches!(parts.len(), 3 | 4 | 10)
        && parts
            .iter()
            .all(|p| p.len() == 4 && p.bytes().all(|c| c.is_ascii_hexdigit()))
}

fn is_base64(s: &str) -> bool {
    // govalidator.IsBase64 (standard alphabet, padded)
    let b = s.as_bytes();
    if b.is_empty() || !b.len().is_multiple_of(4) {
        return false;
    }
    let pad = b.iter().rev().take_while(|c| **c == b'=').count();
    if pad > 2 {
        return false;
    }
    b[..b.len() - pad]
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

fn is_email(s: &str) -> bool {
    // approximation of net/mail.ParseAddress for a bare address
    match s.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !s.chars().any(char::is_whitespace)
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }
        None => false,
    }
}

fn is_hostname(s: &str) -> bool {
    if s.is_empty() || s.len() > 255 {
        return false;
    }
    s.trim_end_matches('.').split('.').all(|label| {
        !label.is_empty()
            && label.chars().count() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || (!c.is_ascii() && !c.is_whitespace()))
    })
}

fn is_request_uri(s: &str) -> bool {
    // url.ParseRequestURI: absolute URI (scheme:...) or an absolute path
    if s.starts_with('/') {
        return !s.chars().any(|c| c == ' ' || c.is_control());
    }
    match s.split_once(':') {
        Some((scheme, rest)) => {
            let mut cs = scheme.chars();
            cs.next().is_some_and(|c| c.is_ascii_alphabetic())
                && cs.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !rest.is_empty()
                && !s.chars().any(|c| c == ' ' || c.is_control())
        }
        None => false,
    }
}

fn is_hex_color(s: &str) -> bool {
    let h = s.strip_prefix('#').unwrap_or(s);
    matches!(h.len(), 3 | 6) && h.bytes().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_time() {
        assert!(is_date_time("2024-05-07T04:54:21Z"));
        assert!(is_date_time("2024-05-07T04:54:21.123456Z"));
        assert!(is_date_time("2024-05-07t04:54:21+02:00"));
        assert!(!is_date_time("2024-05-07 04:54:21Z"));
        assert!(!is_date_time("2024-02-30T04:54:21Z"));
        assert!(!is_date_time("2024-05-07T24:00:00Z"));
        assert!(!is_date_time("2024-05-07T04:54:21"));
        assert!(!is_date_time("yesterday"));
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2023-02-29"));
    }

    #[test]
    fn durations() {
        assert!(is_duration("5m"));
        assert!(is_duration("1h30m"));
        assert!(is_duration("1.5s"));
        assert!(is_duration("0"));
        assert!(is_duration("3 days"));
        assert!(!is_duration("soon"));
    }

    #[test]
    fn misc_formats() {
        assert!(is_uuid("123e4567-e89b-12d3-a456-426614174000", None));
        assert!(is_uuid("123E4567E89B12D3A456426614174000", None));
        assert!(!is_uuid("123e4567-e89b-12d3-a456", None));
        assert!(is_uuid("123e4567-e89b-42d3-a456-426614174000", Some(b'4')));
        assert!(!is_uuid("123e4567-e89b-12d3-a456-426614174000", Some(b'4')));
        assert!(is_cidr("10.0.0.0/8"));
        assert!(!is_cidr("10.0.0.0/33"));
        assert!(is_mac("00:1a:2b:3c:4d:5e"));
        assert!(is_base64("aGVsbG8="));
        assert!(!is_base64("aGVsbG8"));
        assert!(Format::from_name("int32").is_none());
        assert_eq!(Format::from_name("date-time"), Some(Format::DateTime));
    }
}
