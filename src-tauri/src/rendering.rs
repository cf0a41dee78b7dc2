//! How WebKitGTK draws the window on this machine.
//!
//! WebKitGTK composites the page with OpenGL. Without a GPU (no DRM render node: a virtual
//! machine, a remote desktop, Xvfb), that OpenGL is Mesa's software rasteriser, which draws
//! nothing faster than WebKit's own painting does and keeps layer textures besides: on such a
//! machine the web process held about 75 MiB more with compositing on (262 against 187 MiB RSS
//! idle). So without a render node the app turns compositing off, as
//! `WEBKIT_DISABLE_COMPOSITING_MODE=1` does; with one, WebKit keeps its default. A value of that
//! variable the user set wins either way (`0` keeps compositing on).

use std::ffi::OsString;
use std::path::Path;

/// The variable WebKitGTK reads (in every process it starts, which inherit it).
pub const COMPOSITING_OFF: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";

/// Where the kernel lists GPUs' render nodes (`renderD128`, …).
const RENDER_NODES: &str = "/dev/dri";

/// Turns compositing off when this machine has no render node and the user chose nothing.
/// Called first in `main`, before any thread exists: it writes the process environment.
pub fn choose() {
    if compositing_off(has_render_node(Path::new(RENDER_NODES)), std::env::var_os(COMPOSITING_OFF)) {
        // No other thread exists yet to read the environment while it changes.
        std::env::set_var(COMPOSITING_OFF, "1");
    }
}

/// Whether to turn compositing off: only without a render node, and only if the user did not
/// set the variable themselves.
fn compositing_off(render_node: bool, user_choice: Option<OsString>) -> bool {
    !render_node && user_choice.is_none()
}

/// `dir` holds a GPU's render node (a `renderD…` entry).
fn has_render_node(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .is_ok_and(|entries| entries.flatten().any(|entry| entry.file_name().to_string_lossy().starts_with("renderD")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compositing_is_turned_off_only_without_a_gpu_and_a_choice_of_the_users() {
        assert!(compositing_off(false, None), "no render node, no choice: software GL gains nothing");
        assert!(!compositing_off(true, None), "a GPU: WebKit's default");
        assert!(!compositing_off(false, Some("0".into())), "the user's 0 keeps compositing on");
        assert!(!compositing_off(false, Some("1".into())), "the user's 1 is theirs, not rewritten");
    }

    #[test]
    fn a_render_node_is_found_by_its_name() {
        let dir = std::env::temp_dir().join(format!("keypool-dri-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("card0"), "").unwrap();
        assert!(!has_render_node(&dir), "a card node alone is no render node");
        std::fs::write(dir.join("renderD128"), "").unwrap();
        assert!(has_render_node(&dir), "renderD128 is one");
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!has_render_node(&dir), "no directory: no GPU");
    }
}
