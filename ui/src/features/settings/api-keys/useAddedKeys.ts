import { useCallback, useEffect, useRef, useState } from 'react';
import type { KeyRow } from './keyRows';

/** Keys just added: counted where it can be seen, marked in the table, the first scrolled to. */
export interface AddedKeys {
  count: number;
  ids: string[];
}

/**
 * The keys just added, by the Add dialog (its answer names the key) or by an import (the keys in
 * the pool after it that were not before it); until the user's next action on the pool.
 */
export function useAddedKeys(rows: readonly KeyRow[]) {
  const [added, setAdded] = useState<AddedKeys | null>(null);
  /** The pool's key ids when an import began. */
  const beforeImport = useRef<Set<string>>(new Set());
  /** An import ran and the list has been reloaded since: its new keys are to be marked. */
  const [imported, setImported] = useState(false);

  const clear = useCallback(() => setAdded(null), []);
  const keysAdded = (ids: string[]) => {
    if (ids.length > 0) setAdded({ count: ids.length, ids });
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once the reload after an import has landed; `rows` is read then
  useEffect(() => {
    if (!imported) return;
    setImported(false);
    keysAdded(rows.filter((r) => !beforeImport.current.has(r.key.id)).map((r) => r.key.id));
  }, [imported]);

  return {
    added,
    keysAdded,
    /** An import is about to begin: the keys now are not new. */
    importBegins: () => {
      beforeImport.current = new Set(rows.map((r) => r.key.id));
    },
    /** The list was reloaded after an import: the keys not there before are new. */
    importReloaded: () => setImported(true),
    /** The user went on to something else: "5 keys added." is old news, and no row is new. */
    clear,
  };
}
