/** Settings → Providers. The provider list and the API Key Pool section fill this in. */
export function ProvidersSection() {
  return (
    <div className="providers" data-testid="providers-section">
      <h2>Providers</h2>
      <p className="muted">
        Each provider holds a pool of API keys. Keypool spreads requests over the pool by weight, keeps each chat on one
        key so the provider's prompt cache stays warm, and fails over when a key is rate-limited or revoked.
      </p>
    </div>
  );
}
