//! Timestamps and durations with cel-go semantics (Go `time.Time` / `time.Duration`).

use chrono::{DateTime, Datelike, FixedOffset, TimeZone, Timelike, Utc};

/// Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z since the Unix epoch.
pub const MIN_UNIX: i64 = -62_135_596_800;
pub const MAX_UNIX: i64 = 253_402_300_799;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    pub secs: i64,
    pub nanos: u32,
}

/// A Go `time.Duration`: signed nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration {
    pub nanos: i64,
}

pub const TS_OVERFLOW: &str = "timestamp overflow";
pub const DUR_OVERFLOW: &str = "duration overflow";

impl Timestamp {
    pub fn new(secs: i64, nanos: u32) -> Result<Timestamp, String> {
        if !(MIN_UNIX..=MAX_UNIX).contains(&secs) {
            return Err(TS_OVERFLOW.into());
        }
        Ok(Timestamp { secs, nanos })
    }

    pub fn parse(s: &str) -> Result<Timestamp, String> {
        let err = || {
            format!(
                "type conversion error from 'string' to 'google.protobuf.Timestamp': parsing time \"{s}\" as RFC3339"
            )
        };
        // Go's RFC3339 requires 'T' and either 'Z' or an offset.
        if s.len() < 20 || s.as_bytes().get(10) != Some(&b'T') {
            return Err(err());
        }
        let dt = DateTime::parse_from_rfc3339(s).map_err(|_| err())?;
        let utc = dt.with_timezone(&Utc);
        Timestamp::new(utc.timestamp(), utc.timestamp_subsec_nanos())
    }

    fn utc(&self) -> DateTime<Utc> {
        Utc.timestamp_opt(self.secs, self.nanos)
            .single()
            .unwrap_or_default()
    }

    /// Go's `time.RFC3339Nano` rendering in UTC.
    pub fn to_rfc3339(&self) -> String {
        let dt = self.utc();
        let mut s = dt.format("%Y-%m-%dT%H:%M:%S").to_string();
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            s.push('.');
            s.push_str(frac.trim_end_matches('0'));
        }
        s.push('Z');
        s
    }

    pub fn add(&self, d: Duration) -> Result<Timestamp, String> {
        let total = self.secs as i128 * 1_000_000_000 + self.nanos as i128 + d.nanos as i128;
        let secs = total.div_euclid(1_000_000_000);
        let nanos = total.rem_euclid(1_000_000_000) as u32;
        if secs < MIN_UNIX as i128 || secs > MAX_UNIX as i128 {
            return Err(TS_OVERFLOW.into());
        }
        Ok(Timestamp {
            secs: secs as i64,
            nanos,
        })
    }

    pub fn sub(&self, other: &Timestamp) -> Result<Duration, String> {
        let a = self.secs as i128 * 1_000_000_000 + self.nanos as i128;
        let b = other.secs as i128 * 1_000_000_000 + other.nanos as i128;
        let d = a - b;
        i64::try_from(d)
            .map(|nanos| Duration { nanos })
            .map_err(|_| DUR_OVERFLOW.into())
    }

    /// A calendar field of this timestamp in the given time zone (UTC when `None`).
    pub fn field(&self, name: &str, tz: Option<&str>) -> Result<i64, String> {
        let utc = self.utc();
        match tz {
            None => Ok(field_of(&utc, name)),
            Some(tz) => {
                if tz.contains(':') {
                    let off = parse_offset(tz)?;
                    Ok(field_of(&utc.with_timezone(&off), name))
                } else {
                    let zone: chrono_tz::Tz =
                        tz.parse().map_err(|_| format!("unknown time zone {tz}"))?;
                    Ok(field_of(&utc.with_timezone(&zone), name))
                }
            }
        }
    }
}

fn parse_offset(tz: &str) -> Result<FixedOffset, String> {
    let (sign, rest) = match tz.as_bytes().first() {
        Some(b'-') => (-1, &tz[1..]),
        Some(b'+') => (1, &tz[1..]),
        _ => (1, tz),
    };
    let (h, m) = rest
        .split_once(':')
        .ok_or_else(|| format!("unknown time zone {tz}"))?;
    let h: i32 = h.parse().map_err(|_| format!("unknown time zone {tz}"))?;
    let m: i32 = m.parse().map_err(|_| format!("unknown time zone {tz}"))?;
    if !(0..=59).contains(&m) {
        return Err(format!(
            "timezone offset minutes out of range [0, 59]: {tz}"
        ));
    }
    FixedOffset::east_opt(sign * (h * 3600 + m * 60))
        .ok_or_else(|| format!("unknown time zone {tz}"))
}

fn field_of<T: TimeZone>(dt: &DateTime<T>, name: &str) -> i64 {
    match name {
        "getFullYear" => dt.year() as i64,
        "getMonth" => dt.month0() as i64,
        "getDayOfYear" => dt.ordinal0() as i64,
        "getDayOfMonth" => dt.day0() as i64,
        "getDate" => dt.day() as i64,
        "getDayOfWeek" => dt.weekday().num_days_from_sunday() as i64,
        "getHours" => dt.hour() as i64,
        "getMinutes" => dt.minute() as i64,
        "getSeconds" => dt.second() as i64,
        "getMilliseconds" => (dt.nanosecond() % 1_000_000_000 / 1_000_000) as i64,
        _ => 0,
    }
}

impl Duration {
    /// Parses a Go duration string (`time.ParseDuration`).
    pub fn parse(s: &str) -> Result<Duration, String> {
        let err = || {
            format!(
                "type conversion error from 'string' to 'google.protobuf.Duration': time: invalid duration \"{s}\""
            )
        };
        let b = s.as_bytes();
        let mut i = 0;
        let mut neg = false;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            neg = b[i] == b'-';
            i += 1;
        }
        if &s[i..] == "0" {
            return Ok(Duration { nanos: 0 });
        }
        if i == b.len() {
            return Err(err());
        }
        let mut total: u128 = 0;
        while i < b.len() {
            let start = i;
            let mut int_part: u128 = 0;
            while i < b.len() && b[i].is_ascii_digit() {
                int_part = int_part
                    .checked_mul(10)
                    .and_then(|v| v.checked_add((b[i] - b'0') as u128))
                    .ok_or_else(err)?;
                i += 1;
            }
            let had_int = i > start;
            let mut frac: u128 = 0;
            let mut scale: u128 = 1;
            let mut had_frac = false;
            if i < b.len() && b[i] == b'.' {
                i += 1;
                let fs = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    if scale < 1_000_000_000_000_000_000 {
                        frac = frac * 10 + (b[i] - b'0') as u128;
                        scale *= 10;
                    }
                    i += 1;
                }
                had_frac = i > fs;
            }
            if !had_int && !had_frac {
                return Err(err());
            }
            let us = i;
            while i < b.len() && !(b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            let unit: u128 = match &s[us..i] {
                "ns" => 1,
                "us" | "µs" | "μs" => 1_000,
                "ms" => 1_000_000,
                "s" => 1_000_000_000,
                "m" => 60_000_000_000,
                "h" => 3_600_000_000_000,
                _ => return Err(err()),
            };
            let v = int_part
                .checked_mul(unit)
                .and_then(|v| v.checked_add(frac * unit / scale))
                .ok_or_else(err)?;
            total = total.checked_add(v).ok_or_else(err)?;
            if total > (i64::MAX as u128) + 1 {
                return Err(err());
            }
        }
        let nanos: i128 = if neg { -(total as i128) } else { total as i128 };
        i64::try_from(nanos)
            .map(|nanos| Duration { nanos })
            .map_err(|_| err())
    }

    /// cel-go's `string(duration)`: seconds with the shortest decimal form and an `s`.
    pub fn to_cel_string(&self) -> String {
        let secs = self.nanos / 1_000_000_000;
        let frac = (self.nanos % 1_000_000_000).abs();
        let mut s = if self.nanos < 0 && secs == 0 {
            "-0".to_string()
        } else {
            secs.to_string()
        };
        if frac != 0 {
            let f = format!("{frac:09}");
            s.push('.');
            s.push_str(f.trim_end_matches('0'));
        }
        s.push('s');
        s
    }

    pub fn checked_add(&self, o: Duration) -> Result<Duration, String> {
        self.nanos
            .checked_add(o.nanos)
            .map(|nanos| Duration { nanos })
            .ok_or_else(|| DUR_OVERFLOW.into())
    }

    pub fn checked_sub(&self, o: Duration) -> Result<Duration, String> {
        self.nanos
            .checked_sub(o.nanos)
            .map(|nanos| Duration { nanos })
            .ok_or_else(|| DUR_OVERFLOW.into())
    }

    pub fn field(&self, name: &str) -> i64 {
        match name {
            "getHours" => self.nanos / 3_600_000_000_000,
            "getMinutes" => self.nanos / 60_000_000_000,
            "getSeconds" => self.nanos / 1_000_000_000,
            "getMilliseconds" => self.nanos / 1_000_000,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(Duration::parse("1h30m").unwrap().nanos, 5_400_000_000_000);
        assert_eq!(Duration::parse("300ms").unwrap().nanos, 300_000_000);
        assert_eq!(Duration::parse("-1.5s").unwrap().nanos, -1_500_000_000);
        assert_eq!(Duration::parse("0").unwrap().nanos, 0);
        assert!(Duration::parse("1d").is_err());
        assert!(Duration::parse("").is_err());
        assert_eq!(Duration::parse("1h").unwrap().to_cel_string(), "3600s");
        assert_eq!(Duration::parse("1.5s").unwrap().to_cel_string(), "1.5s");
        assert_eq!(Duration::parse("-500ms").unwrap().to_cel_string(), "-0.5s");
    }

    #[test]
    fn timestamps_round_trip() {
        let t = Timestamp::parse("2009-02-13T23:31:30Z").unwrap();
        assert_eq!(t.secs, 1234567890);
        assert_eq!(t.to_rfc3339(), "2009-02-13T23:31:30Z");
        let t = Timestamp::parse("2009-02-13T23:31:30.120+01:00").unwrap();
        assert_eq!(t.to_rfc3339(), "2009-02-13T22:31:30.12Z");
        assert!(Timestamp::parse("2009-02-13").is_err());
        assert_eq!(
            t.field("getHours", Some("America/Los_Angeles")).unwrap(),
            14
        );
        assert_eq!(t.field("getHours", Some("+02:00")).unwrap(), 0);
        assert!(t.field("getHours", Some("+02:99")).is_err());
    }
}
