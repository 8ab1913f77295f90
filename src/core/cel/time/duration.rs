//! Durations as Go's `time.Duration`: `time.ParseDuration`, `String()`, and the
//! arithmetic cel-go checks for overflow.

use super::*;

impl Duration {
    /// Go's `time.ParseDuration`; cel-go reports any failure as a conversion error.
    pub fn parse(s: &str) -> Result<Duration, String> {
        crate::api::duration::parse_go(s)
            .map(|nanos| Duration { nanos })
            .map_err(|_| {
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
