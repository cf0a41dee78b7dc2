//! How many tokens a model's context holds, for the agents that need telling (Codex falls back to
//! a guess for a name it does not know, Claude Code to 200k): a small table of the known model
//! families, by the model's name (a `provider/` prefix and the case set aside), the user's own
//! figure winning over it.

/// Known families, most specific first: a name starting with the prefix holds that many tokens.
const KNOWN: &[(&str, u32)] = &[
    ("claude-", 200_000),
    ("gpt-5", 400_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-", 1_048_576),
    ("deepseek-", 128_000),
    ("glm-4.6", 200_000),
    ("glm-4.5", 128_000),
    ("kimi-k2", 262_144),
    ("qwen3-coder", 262_144),
    ("grok-4", 256_000),
    ("grok-code", 256_000),
    ("minimax-m2", 204_800),
    ("mistral-large", 128_000),
    ("devstral", 128_000),
];

/// The context window of `model` (as a route or the provider names it), when the table knows it.
pub(super) fn known(model: &str) -> Option<u32> {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    KNOWN.iter().find(|(prefix, _)| name.starts_with(prefix)).map(|(_, window)| *window)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_known_by_its_family_whatever_its_provider_prefix_or_case() {
        assert_eq!(known("claude-sonnet-4-6"), Some(200_000));
        assert_eq!(known("openai/GPT-5-codex"), Some(400_000));
        assert_eq!(known("gemini/gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(known("moonshotai/kimi-k2-0905"), Some(262_144));
        assert_eq!(known("gpt-4.1-mini"), Some(1_047_576), "not gpt-4o's");
        assert_eq!(known("my-local-model"), None);
    }
}
