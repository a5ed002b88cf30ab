//! Counts, sizes, rates and durations written for people: three significant digits and a
//! prefix (`17.8M nodes/s`, never `17779325.5159/s`), a duration in at most two units.

use std::time::Duration;

/// The SI prefixes a count or a rate may take, each 1000 times the one before.
const PREFIXES: [&str; 6] = ["k", "M", "G", "T", "P", "E"];

/// `value` (at least 1000) with three significant digits and a prefix: `17.8M`, `1.25G`,
/// `950k`.
fn prefixed(value: f64) -> String {
    let (number, prefix) = scaled(value);
    format!("{number}{prefix}")
}

/// `value` (at least 1000) as three significant digits and the prefix they are counted in:
/// (`17.8`, `M`).
fn scaled(value: f64) -> (String, &'static str) {
    let mut scaled = value;
    for prefix in PREFIXES {
        scaled /= 1000.0;
        // Rounded to three digits first, so that 999 950 reads 1.00M, not 1000k.
        if three_digits(scaled) < 1000.0 || prefix == "E" {
            return (with_three_digits(scaled), prefix);
        }
    }
    unreachable!("the last prefix returns")
}

/// `value` rounded to three significant digits (for `value` of at least 1).
fn three_digits(value: f64) -> f64 {
    let decimals = decimals_for(value);
    let scale = 10f64.powi(decimals as i32);
    (value * scale).round() / scale
}

/// The decimals that give `value` three significant digits (0 from 100 up).
fn decimals_for(value: f64) -> usize {
    if value >= 99.95 {
        0
    } else if value >= 9.995 {
        1
    } else {
        2
    }
}

/// `value` written with three significant digits (`17.8`, `1.25`, `950`).
fn with_three_digits(value: f64) -> String {
    format!("{value:.*}", decimals_for(value))
}

/// A count for people: exact below 1000, else three significant digits and a prefix
/// (`950`, `12.3k`, `17.8M`, `1.25G`).
pub fn human_count(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        prefixed(n as f64)
    }
}

/// Bytes for people, in decimal units: exact below 1000 (`812 bytes`), else three
/// significant digits (`1.25 GB`, `41.7 TB`).
pub fn human_bytes(n: u64) -> String {
    if n < 1000 {
        return format!("{n} bytes");
    }
    let (number, prefix) = scaled(n as f64);
    format!("{number} {prefix}B")
}

/// A rate for people: three significant digits, a prefix from 1000 up, the unit and `/s`
/// (`17.8M nodes/s`, `950 entries/s`, `5.50 games/s`). A rate that is not a finite positive
/// number reads `0`.
pub fn human_rate(per_second: f64, unit: &str) -> String {
    let number = if !per_second.is_finite() || per_second <= 0.0 {
        "0".to_owned()
    } else if three_digits(per_second) >= 1000.0 {
        prefixed(per_second)
    } else if per_second < 0.01 {
        format!("{per_second:.3}")
    } else {
        with_three_digits(per_second)
    };
    if unit.is_empty() {
        format!("{number}/s")
    } else {
        format!("{number} {unit}/s")
    }
}

/// [`human_duration`] of `seconds`, whatever the number (the longest duration past what one
/// holds; none below zero).
pub fn human_seconds(seconds: f64) -> String {
    human_duration(Duration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(Duration::MAX))
}

/// A duration for people, in at most two units: `4.2s`, `42s`, `3m05s`, `1h02m`, `2d03h`.
pub fn human_duration(d: Duration) -> String {
    let seconds = d.as_secs_f64();
    if seconds < 9.95 {
        return format!("{seconds:.1}s");
    }
    let s = d
        .as_secs()
        .saturating_add(u64::from(d.subsec_millis() >= 500));
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_below_a_thousand_then_take_three_digits_and_a_prefix() {
        let cases = [
            (0, "0"),
            (999, "999"),
            (1000, "1.00k"),
            (12_345, "12.3k"),
            (999_499, "999k"),
            (999_500, "1.00M"),
            (17_779_325, "17.8M"),
            (1_250_490_151, "1.25G"),
            (u64::MAX, "18.4E"),
        ];
        for (n, text) in cases {
            assert_eq!(human_count(n), text, "{n}");
        }
    }

    #[test]
    fn bytes_are_exact_below_a_thousand_then_take_three_digits_and_a_unit() {
        assert_eq!(human_bytes(812), "812 bytes");
        assert_eq!(human_bytes(1_254_000_000), "1.25 GB");
        assert_eq!(human_bytes(41_700_000_000_000), "41.7 TB");
        assert_eq!(human_bytes(74_500_000_000), "74.5 GB");
    }

    #[test]
    fn rates_never_show_raw_floats() {
        assert_eq!(human_rate(17_779_325.515_9, "nodes"), "17.8M nodes/s");
        assert_eq!(human_rate(950.0, "entries"), "950 entries/s");
        assert_eq!(human_rate(999.96, "entries"), "1.00k entries/s");
        assert_eq!(human_rate(5.5, "games"), "5.50 games/s");
        assert_eq!(human_rate(0.25, "games"), "0.25 games/s");
        assert_eq!(human_rate(0.004, "games"), "0.004 games/s");
        assert_eq!(human_rate(2.5e9, ""), "2.50G/s");
        for nonsense in [0.0, -3.0, f64::NAN, f64::INFINITY] {
            assert_eq!(human_rate(nonsense, "nodes"), "0 nodes/s");
        }
        // Whatever the rate, at most three digits and a point before the prefix.
        for exponent in -3..19 {
            let rate = 1.2345 * 10f64.powi(exponent);
            let text = human_rate(rate, "");
            let digits = text.chars().filter(char::is_ascii_digit).count();
            assert!(digits <= 4, "{rate}: {text}");
        }
    }

    #[test]
    fn durations_take_at_most_two_units() {
        let cases = [
            (0.0, "0.0s"),
            (4.24, "4.2s"),
            (42.4, "42s"),
            (59.6, "1m00s"),
            (185.0, "3m05s"),
            (3720.0, "1h02m"),
            (183_600.0, "2d03h"),
        ];
        for (seconds, text) in cases {
            assert_eq!(human_duration(Duration::from_secs_f64(seconds)), text);
        }
    }
}
