//! Durations as Go's `time.Duration`: `time.ParseDuration`, `String()`, and the
//! arithmetic cel-go checks for overflow.

use super::*;

impl Duration {
    /// Go's `time.ParseDuration`; cel-go reports any failure as a conversion error.
    pub fn parse(s: &str) -> Result<Duration, String> {
        parse_go_duration(s).ok_or_else(|| {
            "type conversion error from 'string' to 'google.protobuf.Duration'".to_string()
        })
    }

    /// Go's `Duration.Seconds()`.
    pub fn seconds_f64(&self) -> f64 {
        let sec = self.nanos / NANOS_PER_SEC;
        let nsec = self.nanos % NANOS_PER_SEC;
        sec as f64 + nsec as f64 / 1e9
    }

    /// cel-go's `string(duration)`: `strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"`.
    pub fn to_cel_string(&self) -> String {
        let mut s = strconv::format_float_f(self.seconds_f64());
        s.push('s');
        s
    }

    pub fn checked_add(&self, o: Duration) -> Result<Duration, String> {
        self.nanos
            .checked_add(o.nanos)
            .map(|nanos| Duration { nanos })
            .ok_or_else(|| INT_OVERFLOW.into())
    }

    pub fn checked_sub(&self, o: Duration) -> Result<Duration, String> {
        self.nanos
            .checked_sub(o.nanos)
            .map(|nanos| Duration { nanos })
            .ok_or_else(|| INT_OVERFLOW.into())
    }

    pub fn checked_neg(&self) -> Result<Duration, String> {
        self.nanos
            .checked_neg()
            .map(|nanos| Duration { nanos })
            .ok_or_else(|| INT_OVERFLOW.into())
    }

    /// `getHours()` and friends on a duration: Go's `Hours()`, `Minutes()`, `Seconds()`
    /// (floats, truncated) and `Milliseconds()`.
    pub fn field(&self, name: &str) -> i64 {
        let split = |unit: i64| {
            let whole = self.nanos / unit;
            let rest = self.nanos % unit;
            (whole as f64 + rest as f64 / unit as f64) as i64
        };
        match name {
            "getHours" => split(3600 * NANOS_PER_SEC),
            "getMinutes" => split(60 * NANOS_PER_SEC),
            "getSeconds" => self.seconds_f64() as i64,
            "getMilliseconds" => self.nanos / 1_000_000,
            _ => 0,
        }
    }
}

/// Go's `time.ParseDuration`.
fn parse_go_duration(s: &str) -> Option<Duration> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut neg = false;
    if let Some(&c) = b.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        i = 1;
    }
    if &s[i..] == "0" {
        return Some(Duration { nanos: 0 });
    }
    if i == b.len() {
        return None;
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while i < b.len() {
        if !(b[i] == b'.' || b[i].is_ascii_digit()) {
            return None;
        }
        // leading int
        let start = i;
        let mut v: u64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return None;
            }
            v = v * 10 + (b[i] - b'0') as u64;
            if v > LIMIT {
                return None;
            }
            i += 1;
        }
        let pre = i != start;
        // fraction
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let fs = i;
            let mut overflow = false;
            while i < b.len() && b[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + (b[i] - b'0') as u64;
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i != fs;
        }
        if !pre && !post {
            return None;
        }
        // unit
        let us = i;
        while i < b.len() && !(b[i] == b'.' || b[i].is_ascii_digit()) {
            i += 1;
        }
        let unit: u64 = match &s[us..i] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        if v > LIMIT / unit {
            return None;
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return None;
            }
        }
        d += v;
        if d > LIMIT {
            return None;
        }
    }
    if neg {
        return Some(Duration {
            nanos: (d as i64).wrapping_neg(),
        });
    }
    if d > LIMIT - 1 {
        return None;
    }
    Some(Duration { nanos: d as i64 })
}
