//! The documents that map the code stay true to it: `README.md` stays a landing page, and
//! `src-tauri/README.md`'s map names every crate by its own first sentence (the first of its
//! crate doc) and only source paths that exist.

use std::path::{Path, PathBuf};

/// The most the landing page may hold, in bytes: what is longer belongs beside what it describes.
const MAX_README: usize = 16_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// A crate's first sentence: its crate doc's first paragraph up to its first full stop (a
/// heading `# name: text` gives its text), whitespace made single.
fn first_sentence(crate_dir: &Path) -> String {
    let source = ["src/lib.rs", "src/main.rs"]
        .iter()
        .find_map(|file| std::fs::read_to_string(crate_dir.join(file)).ok())
        .unwrap_or_else(|| panic!("{} has a lib.rs or a main.rs", crate_dir.display()));
    let paragraph: Vec<&str> = source
        .lines()
        .take_while(|line| line.starts_with("//!"))
        .map(|line| line.trim_start_matches("//!").trim())
        .take_while(|line| !line.is_empty())
        .collect();
    let text = paragraph.join(" ");
    let text = match text.strip_prefix("# ") {
        Some(heading) => heading.split_once(": ").map_or(heading, |(_, rest)| rest).to_owned(),
        None => text,
    };
    let sentence = text.split(". ").next().unwrap_or_default();
    sentence.trim_end_matches('.').split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The map's code block in `src-tauri/README.md`.
fn map() -> String {
    let readme = std::fs::read_to_string(root().join("src-tauri/README.md")).expect("src-tauri/README.md");
    let section = readme.split("\n## Map of the code\n").nth(1).expect("a map of the code");
    section.split("```").nth(1).expect("the map is a code block").to_owned()
}

/// Each crate's entry in the map: the text after `crates/NAME/` and the lines that go on with it
/// (indented to the descriptions' column), whitespace made single.
fn entries(map: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = map.lines().collect();
    let mut entries = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("  crates/") else { continue };
        let Some((name, text)) = rest.split_once('/') else { continue };
        let mut words = vec![text.trim()];
        for next in &lines[at + 1..] {
            match next.strip_prefix(&" ".repeat(31)) {
                Some(more) if !more.starts_with(' ') => words.push(more.trim()),
                _ => break,
            }
        }
        entries.push((name.to_owned(), words.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    entries
}

#[test]
fn the_landing_page_stays_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        readme.len() <= MAX_README,
        "README.md is {} bytes, more than {MAX_README}: move what describes one part beside it",
        readme.len()
    );
}

#[test]
fn the_map_names_every_crate_by_its_first_sentence() {
    let map = map();
    let entries = entries(&map);
    let crates = std::fs::read_dir(root().join("src-tauri/crates")).expect("the crates folder");
    let mut names: Vec<String> = crates.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in &names {
        let sentence = first_sentence(&root().join("src-tauri/crates").join(name));
        let entry = entries.iter().find(|(entry, _)| entry == name).map(|(_, text)| text.as_str());
        let entry = entry.unwrap_or_else(|| panic!("src-tauri/README.md's map has no entry for crates/{name}/"));
        assert!(
            entry.to_lowercase().starts_with(&sentence.to_lowercase()),
            "crates/{name}/ in src-tauri/README.md's map starts with the crate's first sentence:\n  {sentence}\nbut reads:\n  {entry}"
        );
    }
    for (entry, _) in &entries {
        assert!(names.contains(entry), "the map names crates/{entry}/, which does not exist");
    }
}

#[test]
fn the_map_names_only_paths_that_exist() {
    let map = map();
    let mut current: Option<PathBuf> = None;
    for line in map.lines() {
        if let Some(rest) = line.strip_prefix("  crates/") {
            current = rest.split_once('/').map(|(name, _)| root().join("src-tauri/crates").join(name));
            continue;
        }
        let (Some(dir), Some(listed)) = (&current, line.strip_prefix("    ")) else { continue };
        if listed.starts_with(' ') {
            continue;
        }
        // `src/a.rs, b.rs, c/   what they are`: each name beside the first one's folder.
        let names = listed.split("  ").next().unwrap_or_default();
        let mut folder = PathBuf::new();
        for (i, name) in names.split(", ").map(str::trim).enumerate() {
            let path = if i == 0 { PathBuf::from(name) } else { folder.join(name) };
            if i == 0 {
                folder = path.parent().map(Path::to_path_buf).unwrap_or_default();
            }
            assert!(
                dir.join(&path).exists(),
                "src-tauri/README.md's map names {} in {}",
                path.display(),
                dir.display()
            );
        }
    }
}
