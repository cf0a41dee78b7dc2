import { useEffect, useRef, useState, type KeyboardEvent as ReactKeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import { moved, type KeyRow } from '../keyRows';

interface Drag {
  id: string;
  from: number;
  to: number;
  /** The vertical middles of the rows when the drag began. */
  middles: number[];
}

/** Where the shown rows end up: their ids in the new order, and the key that moved. */
export type Reorder = (ids: string[], movedId: string) => void;

/**
 * Reordering the rows shown (only while `onReorder` is given): drag a row by its handle, the rows
 * making way as it goes, or focus the handle and press the arrow keys, Home or End. A reorder
 * moves the rows' elements, and a moved element loses focus: it is given back to the moved key's
 * handle, only when focus was lost, so a later reload never takes it from where the user put it.
 */
export function useRowReorder(rows: readonly KeyRow[], onReorder: Reorder | null) {
  const [drag, setDrag] = useState<Drag | null>(null);
  const [refocus, setRefocus] = useState<string | null>(null);
  const handles = useRef(new Map<string, HTMLButtonElement>());

  // biome-ignore lint/correctness/useExhaustiveDependencies: `rows` is what re-runs this: each new order moves the elements
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (refocus && lost) handles.current.get(refocus)?.focus();
  }, [refocus, rows]);

  function move(index: number, to: number) {
    if (!onReorder || to < 0 || to >= rows.length || to === index) return;
    const id = rows[index].key.id;
    setRefocus(id);
    onReorder(moved(rows, index, to).map((r) => r.key.id), id);
  }

  return {
    /** The rows in the order shown: a dragged row where it would land. */
    shown: drag ? moved(rows, drag.from, drag.to) : rows,
    dragging: drag?.id ?? null,
    handle: (id: string, el: HTMLButtonElement | null) => {
      if (el) handles.current.set(id, el);
      else handles.current.delete(id);
    },
    handleKeys: (event: ReactKeyboardEvent, index: number) => {
      if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
        event.preventDefault();
        move(index, index + (event.key === 'ArrowUp' ? -1 : 1));
      } else if (event.key === 'Home' || event.key === 'End') {
        event.preventDefault();
        move(index, event.key === 'Home' ? 0 : rows.length - 1);
      }
    },
    /** `middles`: where every row's middle is now, drawn or not. */
    startDrag: (event: ReactPointerEvent<HTMLButtonElement>, index: number, middles: () => number[]) => {
      if (event.button !== 0 || !onReorder) return;
      event.preventDefault();
      event.currentTarget.setPointerCapture?.(event.pointerId);
      setDrag({ id: rows[index].key.id, from: index, to: index, middles: middles() });
    },
    dragMove: (event: ReactPointerEvent) => {
      if (!drag) return;
      const to = drag.middles.filter((m, i) => i !== drag.from && m < event.clientY).length;
      if (to !== drag.to) setDrag({ ...drag, to });
    },
    endDrag: () => {
      if (!drag) return;
      setDrag(null);
      if (drag.to !== drag.from && onReorder) {
        setRefocus(drag.id);
        onReorder(moved(rows, drag.from, drag.to).map((r) => r.key.id), drag.id);
      }
    },
    cancelDrag: () => setDrag(null),
  };
}
