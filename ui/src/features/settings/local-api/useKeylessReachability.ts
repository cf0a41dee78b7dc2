import { useEffect, useMemo, useState } from 'react';
import type { Provider } from '../../../ipc/bindings';
import { llmConfigApi } from '../../../ipc/llmConfig';
import { isKeyless } from './snippets';

/**
 * The ids of the keyless servers among `providers` (a local server, no key: Ollama) that answered
 * when asked for their models, asked once per address while the page is shown. An example sent
 * to one that did not answer would fail, so the examples prefer another provider.
 */
export function useKeylessReachability(providers: readonly Provider[]): ReadonlySet<string> {
  const [answered, setAnswered] = useState<ReadonlyMap<string, boolean>>(new Map());
  // One probe per keyless server and address: a new address is asked again.
  const probes = useMemo(() => providers.filter(isKeyless).map((p) => `${p.id} ${p.baseUrl}`), [providers]);
  const probeKey = probes.join('\n');

  useEffect(() => {
    let live = true;
    for (const probe of probeKey ? probeKey.split('\n') : []) {
      const id = probe.slice(0, probe.indexOf(' '));
      llmConfigApi.listModels(id, true).then(
        () => live && setAnswered((m) => new Map(m).set(probe, true)),
        () => live && setAnswered((m) => new Map(m).set(probe, false)),
      );
    }
    return () => {
      live = false;
    };
  }, [probeKey]);

  return useMemo(() => new Set(probes.filter((probe) => answered.get(probe)).map((probe) => probe.slice(0, probe.indexOf(' ')))), [probes, answered]);
}
