import type { Virtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState, type KeyboardEvent as ReactKeyboardEvent } from 'react';
import type { KeyRow } from '../keyRows';

type Rows = Virtualizer<HTMLDivElement, Element>;

/**
 * Keyboard moves between the rows' checkboxes (Up/Down/PageUp/PageDown/Home/End): the row is
 * brought into view first, which draws it, and its checkbox is focused once drawn. `page`: rows a
 * page moves by.
 */
export function useCheckFocus(rows: readonly KeyRow[], virtualizer: Rows, page: number) {
  /** A row's checkbox to focus once it is drawn. */
  const [wanted, setWanted] = useState<string | null>(null);
  const checks = useRef(new Map<string, HTMLInputElement>());
  const items = virtualizer.getVirtualItems();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `items` is what re-runs this: the wanted row may have just been drawn
  useEffect(() => {
    if (!wanted) return;
    const box = checks.current.get(wanted);
    if (box) {
      box.focus();
      setWanted(null);
    }
  }, [wanted, items]);

  return {
    check: (id: string, el: HTMLInputElement | null) => {
      if (el) checks.current.set(id, el);
      else checks.current.delete(id);
    },
    checkKeys: (event: ReactKeyboardEvent, index: number) => {
      const to = { ArrowDown: index + 1, ArrowUp: index - 1, PageDown: index + page, PageUp: index - page, Home: 0, End: rows.length - 1 }[event.key];
      if (to === undefined) return;
      event.preventDefault();
      const target = Math.max(0, Math.min(rows.length - 1, to));
      virtualizer.scrollToIndex(target, { align: 'auto' });
      setWanted(rows[target].key.id);
    },
  };
}

/**
 * Keys just added may be far below in a long pool: the first of them is brought into view, first
 * in the table's box (which draws it), then in the page (the box itself may be below the fold).
 * Only a new first key scrolls; later reloads of the rows must not pull the view back.
 */
export function useRevealFresh(rows: readonly KeyRow[], fresh: readonly string[], virtualizer: Rows) {
  const firstFresh = fresh.find((id) => rows.some((r) => r.key.id === id));
  const [revealed, setRevealed] = useState<string | null>(null);
  const elements = useRef(new Map<string, HTMLTableRowElement>());
  // biome-ignore lint/correctness/useExhaustiveDependencies: only a new first key scrolls; later reloads of `rows` must not pull the view back
  useEffect(() => {
    if (!firstFresh) return;
    const index = rows.findIndex((r) => r.key.id === firstFresh);
    if (index >= 0) virtualizer.scrollToIndex(index, { align: 'start' });
    setRevealed(null);
  }, [firstFresh, virtualizer]);

  const items = virtualizer.getVirtualItems();
  // biome-ignore lint/correctness/useExhaustiveDependencies: `items` is what re-runs this: the new row may have just been drawn
  useEffect(() => {
    if (!firstFresh || revealed === firstFresh) return;
    const element = elements.current.get(firstFresh);
    if (element) {
      element.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
      setRevealed(firstFresh);
    }
  }, [firstFresh, revealed, items]);

  /** A row's element came or went. */
  return (id: string, el: HTMLTableRowElement | null) => {
    if (el) elements.current.set(id, el);
    else elements.current.delete(id);
  };
}
