//! How much garbage WebKit's JavaScript engine lets pile up before it collects.
//!
//! JavaScriptCore sizes its heap from the machine's RAM. With 16 GiB or more it lets the heap
//! grow to about four times what was live after the last collection (`heapGrowthMaxIncrease` 3
//! in its growth curve), with at least 32 MiB between collections and an eden of up to eight
//! times that; with less RAM, to twice what was live. A long chat builds and drops a few screens
//! of messages as the reader scrolls, and every message built leaves Markdown's parse behind as
//! garbage. On this project's 24 GiB machine, scrolling a 1 000-message chat up to its first
//! message and back grew the web process by 77 MiB, and each further pass by 8–10 MiB more.
//! With the heap allowed 1.25 times what was live, 4 MiB between collections at least and an
//! eden of one cycle, the same scroll grew it by 22–34 MiB, and further passes by none, for
//! 2–16 % more of the web process's CPU time while scrolling; idle memory is the same either
//! way (`tests/bench/chat-memory.mjs`; "What it costs to run" in `tests/bench/README.md`).
//!
//! The engine's top tier, FTL, is off as well. Without it the same chat read after a start grew
//! the web process by 16–18 MiB instead of 24 (release), scrolling the 10 000-key table left it
//! 24 MiB smaller, and neither the table's script and frame times nor its first paint changed
//! (`tests/bench/key-table.mjs`); scrolling the chat took 6–12 % less of the web process's CPU,
//! which no longer compiled in the background.
//!
//! The engine reads its options from `JSC_<name>` variables in the web process, which inherits
//! the app's environment. A variable the user set wins, each on its own.

use std::ffi::OsString;

/// The options the app sets, as the variables JavaScriptCore reads them from.
const TUNING: [(&str, &str); 6] = [
    // With 16 GiB or more: the heap may grow to 1 + 0.25·e^(−2·heap/RAM) times what was live.
    ("JSC_heapGrowthMaxIncrease", "0.25"),
    // With less: while the heap is under a quarter of RAM, then under half, 1.25 times.
    ("JSC_smallHeapGrowthFactor", "1.25"),
    ("JSC_mediumHeapGrowthFactor", "1.25"),
    // The least allowed between collections: 4 MiB, not 32.
    ("JSC_largeHeapSize", "4194304"),
    // With 16 GiB or more, the eden may hold this many times that least before it is collected.
    ("JSC_maxEdenSizeForRateLimitingMultiplier", "1"),
    // No FTL, the engine's top tier: its compiler's memory and code for no speed the page shows.
    ("JSC_useFTLJIT", "0"),
];

/// Sets each of [`TUNING`] the user did not set. Called first in `main`, before any thread
/// exists: it writes the process environment.
pub fn choose() {
    for (name, value) in unset(&TUNING, |name| std::env::var_os(name)) {
        // No other thread exists yet to read the environment while it changes.
        std::env::set_var(name, value);
    }
}

/// The options of `tuning` whose variable `user` holds no value for.
fn unset<'a>(
    tuning: &'a [(&'a str, &'a str)],
    user: impl Fn(&str) -> Option<OsString> + 'a,
) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
    tuning.iter().copied().filter(move |(name, _)| user(name).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_is_set_unless_the_user_set_its_variable() {
        let nothing = unset(&TUNING, |_| None).collect::<Vec<_>>();
        assert_eq!(nothing, TUNING.to_vec(), "no choice of the user's: all of them");

        let own = unset(&TUNING, |name| (name == "JSC_largeHeapSize").then(|| "33554432".into())).collect::<Vec<_>>();
        assert_eq!(own.len(), TUNING.len() - 1, "the user's own value is not rewritten");
        assert!(own.iter().all(|(name, _)| *name != "JSC_largeHeapSize"), "{own:?}");

        let empty =
            unset(&TUNING, |name| (name == "JSC_heapGrowthMaxIncrease").then(OsString::new)).collect::<Vec<_>>();
        assert!(
            empty.iter().all(|(name, _)| *name != "JSC_heapGrowthMaxIncrease"),
            "set, even to nothing, is the user's: {empty:?}"
        );
    }

    #[test]
    fn every_option_is_a_number_javascriptcore_reads() {
        for (name, value) in TUNING {
            assert!(name.starts_with("JSC_") && name.len() > 4, "{name}: JavaScriptCore reads JSC_<option>");
            assert!(value.parse::<f64>().is_ok_and(|v| v >= 0.0), "{name}={value}: a number, 0 for off");
        }
    }
}
