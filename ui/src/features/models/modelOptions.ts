/** The models a picker offers, and which of them a search shows. Pure. */

/** The configured models first (the user's own list), then those the provider lists, each once. */
export function mergedModels(configured: readonly string[], listed: readonly string[]): string[] {
  return [...new Set([...configured, ...listed])];
}

/** The models whose name holds every word of `query` (any case); all of them for an empty query. */
export function matchingModels(models: readonly string[], query: string): string[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...models];
  return models.filter((model) => {
    const name = model.toLowerCase();
    return words.every((word) => name.includes(word));
  });
}
