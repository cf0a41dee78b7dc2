//! The families the UI's Latin text is drawn in, on Linux.
//!
//! The UI wants the desktop's own UI font: Cantarell on GNOME, Ubuntu on Ubuntu, Noto Sans on KDE,
//! and DejaVu Sans or Liberation Sans where none of those is installed. WebKitGTK asks fontconfig for
//! each family of a `font-family` list in turn, once for each font the page uses, until one is
//! found, and each family the machine lacks costs the first paint a lookup: on a machine with
//! only DejaVu Sans, the three families before it kept the first screen's style and layout at
//! 48 ms, where a list starting with DejaVu Sans took 15 ms. Which of them a machine has only
//! the process on it can tell, so the app asks fontconfig once at start which of
//! [`LATIN_FAMILIES`] are installed and hands the page those, in that order (`FirstScreen`'s
//! `fonts`): WebKit then looks up one family, the first.

use std::ffi::CString;

use fontconfig_sys::constants::FC_FAMILY;
use fontconfig_sys::{
    FcFontList, FcFontSetDestroy, FcObjectSetAdd, FcObjectSetCreate, FcObjectSetDestroy, FcPatternAddString,
    FcPatternCreate, FcPatternDestroy,
};

/// Linux desktops' UI families, in the order the UI prefers them (its look on each desktop).
pub const LATIN_FAMILIES: [&str; 7] =
    ["Cantarell", "Ubuntu", "Noto Sans", "DejaVu Sans", "Liberation Sans", "Roboto", "Arial"];

/// The families of [`LATIN_FAMILIES`] this machine has, in that order; empty when it has none
/// (the page then draws in the generic sans-serif).
pub fn installed_latin_families() -> Vec<String> {
    installed(&LATIN_FAMILIES, is_installed)
}

/// The families of `families` that `has` says are installed, in order.
fn installed(families: &[&str], has: impl Fn(&str) -> bool) -> Vec<String> {
    families.iter().filter(|family| has(family)).map(|family| (*family).to_owned()).collect()
}

/// Whether fontconfig lists a font of `family` (by its own name, not a substitute it would
/// match instead), in the configuration WebKitGTK uses: the process's current one.
fn is_installed(family: &str) -> bool {
    let Ok(name) = CString::new(family) else { return false };
    // SAFETY: every object created here is destroyed here, once; `name` and FC_FAMILY outlive the
    // calls that read them (fontconfig copies the string into the pattern); a null configuration
    // is fontconfig's current one, initialised on first use.
    unsafe {
        let pattern = FcPatternCreate();
        let objects = FcObjectSetCreate();
        if pattern.is_null() || objects.is_null() {
            if !pattern.is_null() {
                FcPatternDestroy(pattern);
            }
            if !objects.is_null() {
                FcObjectSetDestroy(objects);
            }
            return false;
        }
        let found = if FcPatternAddString(pattern, FC_FAMILY.as_ptr(), name.as_ptr().cast()) != 0
            && FcObjectSetAdd(objects, FC_FAMILY.as_ptr()) != 0
        {
            let fonts = FcFontList(std::ptr::null_mut(), pattern, objects);
            let found = !fonts.is_null() && (*fonts).nfont > 0;
            if !fonts.is_null() {
                FcFontSetDestroy(fonts);
            }
            found
        } else {
            false
        };
        FcObjectSetDestroy(objects);
        FcPatternDestroy(pattern);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_installed_families_are_kept_in_the_uis_order() {
        let has = |family: &str| matches!(family, "DejaVu Sans" | "Cantarell" | "Arial");
        assert_eq!(installed(&LATIN_FAMILIES, has), ["Cantarell", "DejaVu Sans", "Arial"]);
        assert!(installed(&LATIN_FAMILIES, |_| false).is_empty(), "none installed: none handed");
    }

    #[test]
    fn fontconfig_tells_an_installed_family_from_a_missing_one() {
        // DejaVu Sans comes with fontconfig on Debian and Ubuntu (fonts-dejavu-core), so with WebKitGTK.
        assert!(is_installed("DejaVu Sans"), "DejaVu Sans is installed here");
        assert!(is_installed("dejavu sans"), "family names match in any case, as in CSS");
        assert!(!is_installed("Keypool No Such Family"), "a family nobody has");
        assert!(!is_installed("DejaVu"), "a prefix of a family is not that family");
        assert!(!is_installed("Bad\0Name"), "a name C cannot hold");
        assert!(installed_latin_families().iter().any(|family| family == "DejaVu Sans"), "the app's list finds it");
    }
}
