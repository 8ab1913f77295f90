//! Timestamps and durations with cel-go semantics (Go `time.Time` / `time.Duration`).
//!
//! A timestamp keeps the UTC offset it was written with (`string(timestamp(s))` writes it
//! back), as a Go `time.Time` keeps its location. kcm runs in a container whose local zone
//! is UTC, so an offset of zero reads as UTC and `'Local'` names UTC.

use std::cmp::Ordering;
use std::fmt::Write as _;

use super::strconv;

mod duration;

/// Seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z since the Unix epoch.
pub const MIN_UNIX: i64 = -62_135_596_800;
pub const MAX_UNIX: i64 = 253_402_300_799;

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// A point in time, and the UTC offset (seconds east) it is displayed in.
#[derive(Clone, Copy, Debug)]
pub struct Timestamp {
    pub secs: i64,
    pub nanos: u32,
    /// Seconds east of UTC of the location (0: UTC).
    pub offset: i32,
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        (self.secs, self.nanos) == (other.secs, other.nanos)
    }
}

impl Eq for Timestamp {}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.secs, self.nanos).cmp(&(other.secs, other.nanos))
    }
}

/// A Go `time.Duration`: signed nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    pub nanos: i64,
}

pub const TS_OVERFLOW: &str = "timestamp overflow";
pub const INT_OVERFLOW: &str = "integer overflow";

/// A civil date and time.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian date of a day number (days since 1970-01-01).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in(month: u32, year: i64) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn civil_of(local_secs: i128) -> (Civil, i64) {
    let days = local_secs.div_euclid(86_400) as i64;
    let rem = local_secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    (
        Civil {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem / 60 % 60,
            second: rem % 60,
        },
        days,
    )
}

impl Timestamp {
    /// A UTC timestamp, refused outside years 1 to 9999.
    pub fn new(secs: i64, nanos: u32) -> Result<Timestamp, String> {
        if !(MIN_UNIX..=MAX_UNIX).contains(&secs) {
            return Err(TS_OVERFLOW.into());
        }
        Ok(Timestamp {
            secs,
            nanos,
            offset: 0,
        })
    }

    /// cel-go's `timestamp(string)`: Go's `time.Parse(time.RFC3339, s)` then the range check.
    pub fn parse(s: &str) -> Result<Timestamp, String> {
        let t = parse_rfc3339(s).ok_or_else(|| {
            "type conversion error from 'string' to 'google.protobuf.Timestamp'".to_string()
        })?;
        if !(MIN_UNIX..=MAX_UNIX).contains(&t.secs) {
            return Err(TS_OVERFLOW.into());
        }
        Ok(t)
    }

    /// Go's `t.Format(time.RFC3339Nano)` in the timestamp's own offset.
    pub fn to_rfc3339(&self) -> String {
        let (c, _) = civil_of(self.secs as i128 + self.offset as i128);
        let mut s = String::with_capacity(35);
        if c.year < 0 {
            let _ = write!(s, "-{:04}", -c.year);
        } else {
            let _ = write!(s, "{:04}", c.year);
        }
        let _ = write!(
            s,
            "-{:02}-{:02}T{:02}:{:02}:{:02}",
            c.month, c.day, c.hour, c.minute, c.second
        );
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            s.push('.');
            s.push_str(frac.trim_end_matches('0'));
        }
        if self.offset == 0 {
            s.push('Z');
        } else {
            let minutes = self.offset / 60;
            let (sign, minutes) = if minutes < 0 {
                ('-', -minutes)
            } else {
                ('+', minutes)
            };
            let _ = write!(s, "{sign}{:02}:{:02}", minutes / 60, minutes % 60);
        }
        s
    }

    /// The timestamp in UTC (what `format`'s `%s` prints).
    pub fn utc(&self) -> Timestamp {
        Timestamp { offset: 0, ..*self }
    }

    /// cel-go's `addTimeDurationChecked`: the location is kept.
    pub fn add(&self, d: Duration) -> Result<Timestamp, String> {
        let sec2 = d.nanos / NANOS_PER_SEC;
        let nsec2 = d.nanos % NANOS_PER_SEC;
        let mut sec = self.secs.checked_add(sec2).ok_or(INT_OVERFLOW)?;
        let mut nsec = self.nanos as i64 + nsec2;
        if !(0..NANOS_PER_SEC).contains(&nsec) {
            sec = sec.checked_add(nsec / NANOS_PER_SEC).ok_or(INT_OVERFLOW)?;
            nsec -= (nsec / NANOS_PER_SEC) * NANOS_PER_SEC;
            if nsec < 0 {
                sec = sec.checked_add(-1).ok_or(INT_OVERFLOW)?;
                nsec += NANOS_PER_SEC;
            }
        }
        if !(MIN_UNIX..=MAX_UNIX).contains(&sec) {
            return Err(TS_OVERFLOW.into());
        }
        Ok(Timestamp {
            secs: sec,
            nanos: nsec as u32,
            offset: self.offset,
        })
    }

    /// cel-go's `subtractTimeDurationChecked`.
    pub fn sub_duration(&self, d: Duration) -> Result<Timestamp, String> {
        let neg = d.nanos.checked_neg().ok_or(INT_OVERFLOW)?;
        self.add(Duration { nanos: neg })
    }

    /// cel-go's `subtractTimeChecked`.
    pub fn sub(&self, other: &Timestamp) -> Result<Duration, String> {
        let sec = self.secs.checked_sub(other.secs).ok_or(INT_OVERFLOW)?;
        let nsec = self.nanos as i64 - other.nanos as i64;
        let tsec = sec.checked_mul(NANOS_PER_SEC).ok_or(INT_OVERFLOW)?;
        let nanos = tsec.checked_add(nsec).ok_or(INT_OVERFLOW)?;
        Ok(Duration { nanos })
    }

    /// A calendar field (cel-go's `getHours` and friends) in the zone cel-go's `inTimeZone`
    /// gives for `tz` (UTC when `None`).
    pub fn field(&self, name: &str, tz: Option<&str>) -> Result<i64, String> {
        let offset: i64 = match tz {
            None => 0,
            Some(tz) => zone_offset(tz, self.secs)?,
        };
        let (c, days) = civil_of(self.secs as i128 + offset as i128);
        Ok(match name {
            "getFullYear" => c.year,
            "getMonth" => c.month as i64 - 1,
            "getDayOfYear" => days - days_from_civil(c.year, 1, 1),
            "getDayOfMonth" => c.day as i64 - 1,
            "getDate" => c.day as i64,
            "getDayOfWeek" => (days + 4).rem_euclid(7),
            "getHours" => c.hour as i64,
            "getMinutes" => c.minute as i64,
            "getSeconds" => c.second as i64,
            "getMilliseconds" => (self.nanos / 1_000_000) as i64,
            _ => 0,
        })
    }
}

/// The UTC offset, in seconds, of cel-go's `inTimeZone(ts, tz)` at the instant `secs`.
fn zone_offset(tz: &str, secs: i64) -> Result<i64, String> {
    let Some(colon) = tz.find(':') else {
        // time.LoadLocation
        if tz.is_empty() || tz == "UTC" || tz == "Local" {
            return Ok(0);
        }
        if tz.contains("..") || tz.starts_with('/') || tz.starts_with('\\') {
            return Err("time: invalid location name".into());
        }
        let zone: chrono_tz::Tz = tz.parse().map_err(|_| format!("unknown time zone {tz}"))?;
        use chrono::{Offset, TimeZone};
        let utc = chrono::DateTime::from_timestamp(secs, 0).unwrap_or_default();
        let off = zone
            .offset_from_utc_datetime(&utc.naive_utc())
            .fix()
            .local_minus_utc();
        return Ok(off as i64);
    };
    // A numeric offset `[+-]hh:mm`, read with strconv.Atoi on both sides of the first colon.
    let atoi = |s: &str| {
        strconv::atoi(s).ok_or_else(|| {
            let why = if !s.is_empty()
                && s.trim_start_matches(['+', '-'])
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                && s.len() > 1
            {
                "value out of range"
            } else {
                "invalid syntax"
            };
            format!("strconv.Atoi: parsing {}: {why}", go_quote(s))
        })
    };
    let hr = atoi(&tz[..colon])?;
    let min = atoi(&tz[colon + 1..])?;
    let offset_minutes = if tz.starts_with('-') {
        hr.wrapping_mul(60).wrapping_sub(min)
    } else {
        hr.wrapping_mul(60).wrapping_add(min)
    };
    // (time.Duration(offset) * time.Minute).Seconds(), truncated to int.
    let d = offset_minutes.wrapping_mul(60 * NANOS_PER_SEC);
    Ok(Duration { nanos: d }.seconds_f64() as i64)
}

/// Go's `strconv.Quote` for the ASCII strings the error messages quote; other characters are
/// written as they are.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `time.Parse(time.RFC3339, s)` (its generic layout parser, of which the RFC 3339 fast
/// path is a strict subset): four-digit year, two-digit month, day, minute and second, a one-
/// or two-digit hour, an optional fraction after `.` or `,` (digits beyond nine truncated),
/// and `Z` or a `±hh:mm` offset of up to 24 hours and 60 minutes. No leap second.
fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let mut i = 0;
    // year: four characters, the first a digit, read with time.atoi
    if b.len() < 4 || !b[0].is_ascii_digit() {
        return None;
    }
    let year: i64 = go_time_atoi(&s[0..4])?;
    i += 4;
    let lit = |i: &mut usize, c: u8| -> Option<()> { (b.get(*i) == Some(&c)).then(|| *i += 1) };
    lit(&mut i, b'-')?;
    let (month, n) = getnum(&b[i..], true)?;
    i += n;
    if !(1..=12).contains(&month) {
        return None;
    }
    lit(&mut i, b'-')?;
    let (day, n) = getnum(&b[i..], true)?;
    i += n;
    lit(&mut i, b'T')?;
    let (hour, n) = getnum(&b[i..], false)?;
    i += n;
    if hour >= 24 {
        return None;
    }
    lit(&mut i, b':')?;
    let (minute, n) = getnum(&b[i..], true)?;
    i += n;
    if minute >= 60 {
        return None;
    }
    lit(&mut i, b':')?;
    let (second, n) = getnum(&b[i..], true)?;
    i += n;
    if second >= 60 {
        return None;
    }
    let mut nanos: i64 = 0;
    if b.len() >= i + 2 && (b[i] == b'.' || b[i] == b',') && b[i + 1].is_ascii_digit() {
        let mut n = i + 2;
        while n < b.len() && b[n].is_ascii_digit() {
            n += 1;
        }
        let digits = &s[i + 1..n.min(i + 10)];
        let mut v: i64 = digits.parse().ok()?;
        for _ in digits.len()..9 {
            v *= 10;
        }
        nanos = v;
        i = n;
    }
    // zone
    let offset: i64 = if b.get(i) == Some(&b'Z') {
        i += 1;
        0
    } else {
        if b.len() < i + 6 || b[i + 3] != b':' {
            return None;
        }
        let (hr, _) = getnum(&b[i + 1..i + 3], true)?;
        let (mm, _) = getnum(&b[i + 4..i + 6], true)?;
        if hr > 24 || mm > 60 {
            return None;
        }
        let off = (hr * 60 + mm) * 60;
        let off = match b[i] {
            b'+' => off,
            b'-' => -off,
            _ => return None,
        };
        i += 6;
        off
    };
    if i != b.len() {
        return None;
    }
    if day < 1 || day as u32 > days_in(month as u32, year) {
        return None;
    }
    let days = days_from_civil(year, month as u32, day as u32);
    let local = days as i128 * 86_400 + hour as i128 * 3600 + minute as i128 * 60 + second as i128;
    let secs = i64::try_from(local - offset as i128).ok()?;
    Some(Timestamp {
        secs,
        nanos: nanos as u32,
        offset: offset as i32,
    })
}

/// Go's time `getnum`: one or two digits (`fixed`: exactly two).
fn getnum(b: &[u8], fixed: bool) -> Option<(i64, usize)> {
    let d0 = *b.first().filter(|c| c.is_ascii_digit())?;
    match b.get(1).filter(|c| c.is_ascii_digit()) {
        Some(&d1) => Some((((d0 - b'0') * 10 + (d1 - b'0')) as i64, 2)),
        None if fixed => None,
        None => Some(((d0 - b'0') as i64, 1)),
    }
}

/// Go's time `atoi`: an optional sign, then digits only.
fn go_time_atoi(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i64 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> Timestamp {
        Timestamp::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_go_durations() {
        assert_eq!(Duration::parse("1h30m").unwrap().nanos, 5_400_000_000_000);
        assert_eq!(Duration::parse("300ms").unwrap().nanos, 300_000_000);
        assert_eq!(Duration::parse("-1.5s").unwrap().nanos, -1_500_000_000);
        assert_eq!(Duration::parse("0").unwrap().nanos, 0);
        assert_eq!(Duration::parse("+0").unwrap().nanos, 0);
        assert_eq!(Duration::parse(".5s").unwrap().nanos, 500_000_000);
        assert_eq!(Duration::parse("1.s").unwrap().nanos, 1_000_000_000);
        assert_eq!(Duration::parse("1µs").unwrap().nanos, 1_000);
        assert!(Duration::parse("1d").is_err());
        assert!(Duration::parse("1").is_err());
        assert!(Duration::parse("").is_err());
        assert!(Duration::parse(".s").is_err());
        assert_eq!(
            Duration::parse("-2562047h47m16.854775808s").unwrap().nanos,
            i64::MIN
        );
        assert!(Duration::parse("2562047h47m16.854775808s").is_err());
        assert_eq!(Duration::parse("1h").unwrap().to_cel_string(), "3600s");
        assert_eq!(Duration::parse("1.5s").unwrap().to_cel_string(), "1.5s");
        assert_eq!(Duration::parse("-500ms").unwrap().to_cel_string(), "-0.5s");
        assert_eq!(
            Duration { nanos: i64::MAX }.to_cel_string(),
            "9223372036.854776s"
        );
    }

    #[test]
    fn parses_rfc3339_as_go_does() {
        let t = ts("2009-02-13T23:31:30Z");
        assert_eq!(t.secs, 1234567890);
        assert_eq!(t.to_rfc3339(), "2009-02-13T23:31:30Z");
        let t = ts("2009-02-13T23:31:30.120+01:00");
        assert_eq!(t.secs, 1234567890 - 3600);
        assert_eq!(t.to_rfc3339(), "2009-02-13T23:31:30.12+01:00");
        assert_eq!(
            ts("2009-02-13T23:31:30-00:00").to_rfc3339(),
            "2009-02-13T23:31:30Z"
        );
        assert_eq!(
            ts("2025-03-04T05:06:07+24:00").to_rfc3339(),
            "2025-03-04T05:06:07+24:00"
        );
        assert_eq!(
            ts("2025-03-04T05:06:07+05:60").to_rfc3339(),
            "2025-03-04T05:06:07+06:00"
        );
        assert_eq!(ts("2025-03-04T05:06:07,5Z").nanos, 500_000_000);
        assert_eq!(
            ts("2025-03-04T5:06:07Z").to_rfc3339(),
            "2025-03-04T05:06:07Z"
        );
        assert_eq!(ts("2025-03-04T05:06:07.1234567891Z").nanos, 123_456_789);
        for bad in [
            "2009-02-13",
            "2025-03-04T05:06:60Z",
            "2025-02-29T00:00:00Z",
            "2025-13-01T00:00:00Z",
            "2025-03-04t05:06:07Z",
            "2025-03-04T05:06:07",
            "2025-03-04T05:06:07+25:00",
            "2025-03-04T05:06:07+05:61",
            "2025-03-04T05:06:07.Z",
            "2025-03-04T05:06:07Zx",
            "+025-03-04T05:06:07Z",
            "2025-3-04T05:06:07Z",
        ] {
            assert!(Timestamp::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ts("2024-02-29T00:00:00Z").field("getDayOfYear", None),
            Ok(59)
        );
        assert_eq!(
            Timestamp::parse("0001-01-01T00:00:00+01:00").unwrap_err(),
            TS_OVERFLOW
        );
    }

    #[test]
    fn fields_in_zones_as_cel_go() {
        let t = ts("2009-02-13T23:31:30.120+01:00");
        assert_eq!(t.field("getHours", Some("America/Los_Angeles")), Ok(14));
        assert_eq!(t.field("getHours", Some("+02:00")), Ok(0));
        assert_eq!(t.field("getHours", Some("")), Ok(22));
        assert_eq!(t.field("getHours", Some("Local")), Ok(22));
        assert_eq!(t.field("getHours", Some("UTC")), Ok(22));
        assert_eq!(t.field("getHours", Some("+05:60")), Ok(4));
        assert_eq!(t.field("getHours", Some("+99:00")), Ok(1));
        assert_eq!(t.field("getHours", Some("-00:30")), Ok(22));
        assert_eq!(t.field("getMinutes", Some("-00:30")), Ok(1));
        assert_eq!(t.field("getMilliseconds", None), Ok(120));
        assert_eq!(t.field("getDayOfWeek", None), Ok(5));
        assert!(t.field("getHours", Some("+02:xx")).is_err());
        assert!(t.field("getHours", Some("Nowhere/City")).is_err());
        assert!(t.field("getHours", Some("../etc")).is_err());
        assert_eq!(
            t.field("getHours", Some(" 5:00")).unwrap_err(),
            "strconv.Atoi: parsing \" 5\": invalid syntax"
        );
    }

    #[test]
    fn arithmetic_keeps_the_offset() {
        let t = ts("2025-03-04T05:06:07+05:30");
        let later = t.add(Duration::parse("1h").unwrap()).unwrap();
        assert_eq!(later.to_rfc3339(), "2025-03-04T06:06:07+05:30");
        assert_eq!(
            ts("2025-03-04T00:30:00Z").sub(&t).unwrap().nanos,
            3_233_000_000_000
        );
        assert!(
            ts("9999-12-31T23:59:59Z")
                .add(Duration {
                    nanos: NANOS_PER_SEC
                })
                .is_err()
        );
        assert_eq!(
            Duration {
                nanos: 9_223_372_035_999_999_999
            }
            .field("getSeconds"),
            9_223_372_036
        );
    }
}
