//! When a daily quota comes back: Google's per-day quotas (Gemini's requests per day) reset at
//! midnight Pacific time, which is 07:00 or 08:00 UTC depending on daylight saving time. The
//! time zone comes from the IANA database compiled into the binary, never from a fixed offset.

use jiff::tz::{self, TimeZone};

use crate::time::Timestamp;

/// America/Los_Angeles, the zone Google's quota days are counted in.
static PACIFIC: TimeZone = tz::get!("America/Los_Angeles");

/// The first midnight in America/Los_Angeles after `now`: when a quota spent for the day at
/// `now` is whole again. Pure: the same `now` always gives the same instant.
///
/// At midnight exactly, the day has just begun: the next midnight is a day later. Instants
/// outside the calendar's range (only sentinels) answer a day after `now`.
pub fn pacific_day_end(now: Timestamp) -> Timestamp {
    let day_later = now + std::time::Duration::from_secs(24 * 3600);
    let Ok(at) = jiff::Timestamp::from_millisecond(now.as_millis()) else { return day_later };
    let local = at.to_zoned_datetime(PACIFIC.clone());
    local
        .date()
        .tomorrow()
        .and_then(|tomorrow| tomorrow.to_zoned_datetime(PACIFIC.clone()))
        .map(|midnight| Timestamp::from_millis(midnight.timestamp().as_millisecond()))
        .unwrap_or(day_later)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(text: &str) -> Timestamp {
        let at: jiff::Timestamp = text.parse().expect("an RFC 3339 instant");
        Timestamp::from_millis(at.as_millisecond())
    }

    #[test]
    fn the_pacific_day_ends_at_local_midnight_in_winter_and_summer() {
        let cases = [
            ("2026-01-15T20:00:00Z", "2026-01-16T08:00:00Z", "winter: Pacific Standard Time is UTC-8"),
            ("2026-07-15T20:00:00Z", "2026-07-16T07:00:00Z", "summer: Pacific Daylight Time is UTC-7"),
            ("2026-07-16T06:59:59.999Z", "2026-07-16T07:00:00Z", "a millisecond before midnight"),
            ("2026-07-16T07:00:00Z", "2026-07-17T07:00:00Z", "at midnight the day has just begun"),
        ];
        for (now, end, why) in cases {
            assert_eq!(pacific_day_end(utc(now)), utc(end), "{why}");
        }
    }

    #[test]
    fn the_days_of_the_clock_changes_are_23_and_25_hours_long() {
        let days = [
            // 2026-03-08: clocks go forward at 02:00 PST; the day ends at PDT midnight.
            ("2026-03-08T08:00:00Z", "2026-03-09T07:00:00Z", 23, "the day the clocks go forward"),
            // 2026-11-01: clocks go back at 02:00 PDT; the day ends at PST midnight.
            ("2026-11-01T07:00:00Z", "2026-11-02T08:00:00Z", 25, "the day the clocks go back"),
        ];
        for (start, end, hours, why) in days {
            let (start, end) = (utc(start), utc(end));
            assert_eq!(pacific_day_end(start), end, "{why} ends at local midnight");
            assert_eq!(end.as_millis() - start.as_millis(), hours * 3600 * 1000, "{why} has {hours} hours");
        }
    }
}
