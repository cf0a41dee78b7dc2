//! What the endpoint learns of providers while it translates: which have no Responses API.

use keypool_llm::ProviderEndpoint;

/// The providers found to have no Responses API (many OpenAI-compatible servers have only chat
/// completions and answer it 404), by id and address: a Responses request to one of them goes
/// to its chat completions, translated. Learnt by this process, for as long as it runs.
#[derive(Default)]
pub(crate) struct WithoutResponses(std::sync::RwLock<std::collections::HashSet<(String, String)>>);

impl WithoutResponses {
    fn name(endpoint: &ProviderEndpoint) -> (String, String) {
        (endpoint.id.to_string(), endpoint.base_url.to_string())
    }

    pub(crate) fn knows(&self, endpoint: &ProviderEndpoint) -> bool {
        let known = self.0.read().unwrap_or_else(|e| e.into_inner());
        !known.is_empty() && known.contains(&Self::name(endpoint))
    }

    pub(crate) fn learn(&self, endpoint: &ProviderEndpoint) {
        tracing::info!(provider = %endpoint.name, "the provider has no Responses API: its chat completions answer");
        self.0.write().unwrap_or_else(|e| e.into_inner()).insert(Self::name(endpoint));
    }
}
