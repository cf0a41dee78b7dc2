import { useCallback, useEffect, useRef, useState } from 'react';
import type { KeyTestResult } from '../../../ipc/bindings';
import { llmConfigApi } from '../../../ipc/llmConfig';

/** One key's test: running, its result, or the command failing (e.g. the key was deleted). */
export type KeyTest =
  | { kind: 'testing' }
  | { kind: 'done'; result: KeyTestResult }
  | { kind: 'failed'; error: unknown };

/** Tests keys against their provider (`llmConfig:testApiKey`, `llmConfig:testApiKeys`); the last result per key. */
export function useKeyTests() {
  const [tests, setTests] = useState<Record<string, KeyTest>>({});
  const live = useRef(true);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
    };
  }, []);

  const test = useCallback(async (id: string) => {
    setTests((all) => ({ ...all, [id]: { kind: 'testing' } }));
    let outcome: KeyTest;
    try {
      outcome = { kind: 'done', result: await llmConfigApi.testApiKey(id) };
    } catch (error) {
      outcome = { kind: 'failed', error };
    }
    if (live.current) setTests((all) => ({ ...all, [id]: outcome }));
  }, []);

  /** Tests several keys in one command (the backend bounds the concurrency); resolves with the results. */
  const testMany = useCallback(async (ids: string[]) => {
    setTests((all) => ({ ...all, ...Object.fromEntries(ids.map((id) => [id, { kind: 'testing' } as KeyTest])) }));
    try {
      const results = await llmConfigApi.testApiKeys(ids);
      if (live.current) setTests((all) => ({ ...all, ...Object.fromEntries(ids.map((id, i) => [id, { kind: 'done', result: results[i] } as KeyTest])) }));
      return results;
    } catch (error) {
      if (live.current) setTests((all) => ({ ...all, ...Object.fromEntries(ids.map((id) => [id, { kind: 'failed', error } as KeyTest])) }));
      throw error;
    }
  }, []);

  return { tests, test, testMany };
}
