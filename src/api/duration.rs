//! Go durations: `time.ParseDuration` and `time.Duration.String()` exactly, the stricter
//! grammar the Flux CRDs accept ([`FLUX_DURATION_PATTERN`]), and the command-line flags that
//! take a duration.

use std::time::Duration;

/// The pattern the Flux CRDs (HelmRelease, Kustomization, sources) put on every duration
/// field. Stricter than Go: no sign, no `ns`/`us`, no bare `0`, no spaces.
pub const FLUX_DURATION_PATTERN: &str = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$";

/// Whether `s` matches [`FLUX_DURATION_PATTERN`].
pub fn is_flux_duration(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let frac = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == frac {
                return false;
            }
        }
        if b[i..].starts_with(b"ms") {
            i += 2;
        } else if i < b.len() && matches!(b[i], b's' | b'm' | b'h') {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

/// A duration in the Flux grammar (`30s`, `5m`, `1h30m`, `1.5h`, `300ms`).
pub fn parse_flux(s: &str) -> Option<Duration> {
    if !is_flux_duration(s) {
        return None;
    }
    let nanos = parse_go(s).ok()?;
    Some(Duration::from_nanos(u64::try_from(nanos).ok()?))
}

/// Go `time.ParseDuration`, in nanoseconds; the error is Go's message.
pub fn parse_go(orig: &str) -> Result<i64, String> {
    let err = || format!("time: invalid duration {orig:?}");
    let mut s = orig.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(err());
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(err());
        }
        // The integer part.
        let mut v: u64 = 0;
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(err());
            }
            v = v * 10 + u64::from(s[i] - b'0');
            if v > LIMIT {
                return Err(err());
            }
            i += 1;
        }
        let pre = i > 0;
        s = &s[i..];
        // The fraction.
        let mut post = false;
        let mut f: u64 = 0;
        let mut scale: f64 = 1.0;
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let mut i = 0;
            let mut overflow = false;
            while i < s.len() && s[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(s[i] - b'0');
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
            post = i > 0;
            s = &s[i..];
        }
        if !pre && !post {
            return Err(err());
        }
        let mut i = 0;
        while i < s.len() && s[i] != b'.' && !s[i].is_ascii_digit() {
            i += 1;
        }
        if i == 0 {
            return Err(format!("time: missing unit in duration {orig:?}"));
        }
        let unit: u64 = match &s[..i] {
            b"ns" => 1,
            b"us" | [0xC2, 0xB5, b's'] | [0xCE, 0xBC, b's'] => 1_000, // us, µs (U+00B5), μs (U+03BC)
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            u => {
                return Err(format!(
                    "time: unknown unit {:?} in duration {orig:?}",
                    String::from_utf8_lossy(u)
                ));
            }
        };
        s = &s[i..];
        if v > LIMIT / unit {
            return Err(err());
        }
        v *= unit;
        if f > 0 {
            // Go: v += uint64(float64(f) * (float64(unit) / scale))
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let add = (f as f64 * (unit as f64 / scale)) as u64;
            v += add;
            if v > LIMIT {
                return Err(err());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(err());
        }
    }
    if neg {
        return Ok((d as i128).wrapping_neg() as i64);
    }
    if d > LIMIT - 1 {
        return Err(err());
    }
    Ok(d as i64)
}

/// Go `time.Duration.String()` of a duration in nanoseconds (`1h30m0s`, `1.5s`, `300µs`).
pub fn format_go(d: i64) -> String {
    let neg = d < 0;
    let u = d.unsigned_abs();
    let frac = |v: u64, prec: u32| -> (String, u64) {
        let p = 10u64.pow(prec);
        let digits = format!("{:0width$}", v % p, width = prec as usize);
        let digits = digits.trim_end_matches('0');
        let s = if digits.is_empty() {
            String::new()
        } else {
            format!(".{digits}")
        };
        (s, v / p)
    };
    let body = if u == 0 {
        return "0s".to_string();
    } else if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        let (f, i) = frac(u, 3);
        format!("{i}{f}\u{b5}s")
    } else if u < 1_000_000_000 {
        let (f, i) = frac(u, 6);
        format!("{i}{f}ms")
    } else {
        let (f, secs) = frac(u, 9);
        let mut out = format!("{}{f}s", secs % 60);
        let mins = secs / 60;
        if mins > 0 {
            out = format!("{}m{out}", mins % 60);
            let hours = mins / 60;
            if hours > 0 {
                out = format!("{hours}h{out}");
            }
        }
        out
    };
    if neg { format!("-{body}") } else { body }
}

/// A short age for people: `45s` under two minutes, `12m` under two hours, `3h5m` under two
/// days, then `2d`.
pub fn human(d: Duration) -> String {
    match d.as_secs() {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d", s / 86_400),
    }
}

/// Go's format of `d` truncated to whole seconds (`1h2m3s`, `5m0s`), or to milliseconds below
/// a second (`300ms`, `0ms`): for messages, where sub-second precision is noise.
pub fn format_coarse(d: Duration) -> String {
    if d.as_secs() == 0 {
        return format!("{}ms", d.subsec_millis());
    }
    let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 1_000_000_000);
    format_go(secs.saturating_mul(1_000_000_000))
}

/// A duration flag that also takes `0` (wait forever, never): `--request-timeout`,
/// `--resync`, `--source-timeout`.
pub fn flag_or_zero(s: &str) -> Result<Duration, String> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    parse_flux(s).ok_or_else(|| format!("{s:?} is not a duration (e.g. 30s, 1m)"))
}

/// kubectl's `--request-timeout`: a plain integer is seconds (`30`), otherwise a duration
/// (`30s`, `1m`); `0` waits forever.
pub fn request_timeout(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return t
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|_| format!("{s:?} is too many seconds"));
    }
    flag_or_zero(t).map_err(|_| {
        format!("{s:?} is not a timeout: give seconds (30) or a duration with a unit (30s, 1m); 0 waits forever")
    })
}

/// A duration flag that must be positive (`--stuck-after`).
pub fn flag(s: &str) -> Result<Duration, String> {
    parse_flux(s).ok_or_else(|| format!("{s:?} is not a duration (e.g. 30s, 10m, 1h30m)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flux_pattern() {
        for ok in ["5m", "1h30m", "300ms", "1.5h", "5m0s", "10s", "0s"] {
            assert!(is_flux_duration(ok), "{ok}");
        }
        for bad in [
            "",
            "5",
            "-5m",
            "+5m",
            "5 minutes",
            ".5s",
            "5ns",
            "5us",
            "1d",
            "5m ",
            "m",
        ] {
            assert!(!is_flux_duration(bad), "{bad}");
        }
    }

    #[test]
    fn parses_flux_durations() {
        assert_eq!(parse_flux("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_flux("300ms"), Some(Duration::from_millis(300)));
        assert_eq!(parse_flux("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_flux("5 minutes"), None);
        assert_eq!(parse_flux("-5m"), None);
    }

    #[test]
    fn go_round_trip() {
        for (i, o) in [
            ("5m", "5m0s"),
            ("300s", "5m0s"),
            ("1h", "1h0m0s"),
            ("90m", "1h30m0s"),
            ("1.5s", "1.5s"),
            ("1500ms", "1.5s"),
            ("0", "0s"),
            ("-2s", "-2s"),
            ("100us", "100\u{b5}s"),
            ("1.5ms", "1.5ms"),
            ("10ns", "10ns"),
            ("1h2m3.004s", "1h2m3.004s"),
        ] {
            assert_eq!(format_go(parse_go(i).unwrap()), o, "{i}");
        }
        for bad in ["", "5", "m", "1x", ".s", "-", "1.2.3s"] {
            assert!(parse_go(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_go("5 minutes").unwrap_err(),
            "time: unknown unit \" minutes\" in duration \"5 minutes\""
        );
        assert!(parse_go("9999999999h").is_err());
    }

    #[test]
    fn go_edges() {
        // A sign, then a bare 0 (the one number without a unit).
        for zero in ["0", "+0", "-0", "0s", "-0s"] {
            assert_eq!(parse_go(zero), Ok(0), "{zero}");
        }
        assert!(parse_go("00").is_err());
        assert!(parse_go("+").is_err());
        assert_eq!(parse_go(".5s"), Ok(500_000_000));
        assert_eq!(parse_go("1.s"), Ok(1_000_000_000));
        assert_eq!(parse_go("+1m"), Ok(60_000_000_000));
        // Micro: us, MICRO SIGN (U+00B5) and GREEK SMALL LETTER MU (U+03BC).
        for micro in ["3us", "3\u{b5}s", "3\u{3bc}s"] {
            assert_eq!(parse_go(micro), Ok(3_000), "{micro}");
        }
        // 1<<63 nanoseconds: a negative duration may reach it, a positive one may not.
        assert_eq!(parse_go("9223372036854775807ns"), Ok(i64::MAX));
        assert!(parse_go("9223372036854775808ns").is_err());
        assert_eq!(parse_go("-9223372036854775808ns"), Ok(i64::MIN));
        assert!(parse_go("-9223372036854775809ns").is_err());
        assert_eq!(parse_go("-2562047h47m16.854775808s"), Ok(i64::MIN));
        assert!(parse_go("2562047h47m16.854775808s").is_err());
        assert!(parse_go("2562048h").is_err());
        // Fraction digits beyond what fits are dropped, not an error.
        assert_eq!(parse_go("1.0000000000000000000001s"), Ok(1_000_000_000));
        assert_eq!(
            parse_go("1").unwrap_err(),
            "time: missing unit in duration \"1\""
        );
    }

    #[test]
    fn flags() {
        assert_eq!(flag_or_zero("0"), Ok(Duration::ZERO));
        assert_eq!(flag_or_zero("2m"), Ok(Duration::from_secs(120)));
        assert!(
            flag_or_zero("2 m")
                .unwrap_err()
                .contains("is not a duration")
        );
        assert!(flag("0").is_err());
        assert_eq!(request_timeout("30"), Ok(Duration::from_secs(30)));
        assert_eq!(request_timeout("0"), Ok(Duration::ZERO));
        assert_eq!(request_timeout("1m"), Ok(Duration::from_secs(60)));
        assert!(request_timeout("-1").is_err());
        assert!(
            request_timeout("soon")
                .unwrap_err()
                .contains("give seconds")
        );
        assert_eq!(flag("1h30m"), Ok(Duration::from_secs(5400)));
    }

    #[test]
    fn human_and_coarse_durations() {
        assert_eq!(human(Duration::from_secs(45)), "45s");
        assert_eq!(human(Duration::from_secs(12 * 60 + 5)), "12m");
        assert_eq!(human(Duration::from_secs(3 * 3600 + 5 * 60)), "3h5m");
        assert_eq!(human(Duration::from_secs(3 * 86_400)), "3d");
        assert_eq!(format_coarse(Duration::from_millis(300)), "300ms");
        assert_eq!(format_coarse(Duration::from_millis(90_500)), "1m30s");
        assert_eq!(format_coarse(Duration::from_secs(3605)), "1h0m5s");
        assert_eq!(format_coarse(Duration::from_secs(5)), "5s");
    }
}
