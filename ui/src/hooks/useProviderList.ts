import { useEffect, useState } from 'react';
import type { Provider } from '../ipc/bindings';
import { llmConfigApi } from '../ipc/llmConfig';

/**
 * The providers, read once, for pages that only name them (a filter, examples); none if they
 * cannot be read, so the page still works without them.
 */
export function useProviderList(): Provider[] {
  const [providers, setProviders] = useState<Provider[]>([]);
  useEffect(() => {
    let live = true;
    llmConfigApi.getProviders().then(
      (list) => live && setProviders(list),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  return providers;
}
