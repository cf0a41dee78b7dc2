import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useId, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent as ReactKeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import type { MessageKey } from '../../../i18n';
import { moved, type KeyRow } from './keyRows';
import type { Sort, SortColumn } from './keyTable';
import { ActionsHeadSizer, KeyTableRow, type RowActions } from './KeyTableRow';
import type { KeyTest } from './useKeyTests';

interface Props {
  /** The rows shown (filtered, searched, sorted), in the order shown. */
  rows: KeyRow[];
  offset: number;
  onWeight: (id: string, weight: number) => Promise<unknown>;
  onToggle: (id: string, enabled: boolean) => void;
  /** Switches on a disabled key that just tested fine (nothing left to ask). */
  onEnable: (id: string) => void;
  onDelete: (row: KeyRow) => void;
  onEdit: (row: KeyRow) => void;
  /** Keys just added: marked, and the first scrolled into view. */
  fresh: readonly string[];
  onResetCooldown: (id: string) => void;
  /** Null while the rows are not the whole pool in its own order (filtered, searched or sorted). */
  onReorder: ((ids: string[], movedId: string) => void) | null;
  onCooldownEnd: () => void;
  tests: Record<string, KeyTest>;
  onTest: (id: string) => void;
  sort: Sort;
  onSort: (column: Exclude<SortColumn, 'order'>) => void;
  selected: ReadonlySet<string>;
  /** A row's checkbox changed; `range`: shift was held (from the last row clicked to this one). */
  onSelect: (id: string, checked: boolean, range: boolean) => void;
  /** The header's checkbox: every shown row, or none. */
  onSelectShown: (checked: boolean) => void;
}

interface Drag {
  id: string;
  from: number;
  to: number;
  /** The vertical middles of the rows when the drag began. */
  middles: number[];
}

/** A row's height before it is measured (a key with nothing more to say); rows measure themselves once drawn. */
export const ROW_HEIGHT = 60;
/**
 * Rows drawn beyond the visible ones on each side, so Tab and the arrow keys find the next row
 * drawn (focus then scrolls it into view, which draws the ones after it). Few: a fling draws
 * every drawn row anew on each step.
 */
const OVERSCAN = 3;

export function keyName(row: KeyRow, unlabeled: string): string {
  return row.key.label ?? (row.key.apiKeyPreview || unlabeled);
}

const COLUMNS: { column: Exclude<SortColumn, 'order'>; label: MessageKey }[] = [
  { column: 'key', label: 'pool.colKey' },
  { column: 'weight', label: 'pool.colWeight' },
  { column: 'state', label: 'pool.colState' },
  { column: 'usage', label: 'pool.colUsage' },
  { column: 'enabled', label: 'pool.colEnabled' },
];

/**
 * The shown keys as a table (role=table: a header row, then one row per key, with
 * aria-rowcount/aria-rowindex so a screen reader knows the whole size while only the rows near the
 * view are drawn; @tanstack/react-virtual decides which). Sorting: the column headers' buttons.
 * Selecting: a checkbox per row (shift-click selects the range from the last one clicked), the
 * header's for every shown row; Up/Down/Home/End on a row's checkbox move to the next row's, drawing
 * it first. Reordering (only while the whole pool is shown in its own order): drag a row by its
 * handle, or focus the handle and press the arrow keys; focus stays on the moved key's handle.
 */
export function KeyList({ rows, offset, onWeight, onToggle, onEnable, onDelete, onEdit, fresh, onResetCooldown, onReorder, onCooldownEnd, tests, onTest, sort, onSort, selected, onSelect, onSelectShown }: Props) {
  const { t } = useI18n();
  const unlabeled = t('key.unlabeled');
  const hintId = useId();
  const [drag, setDrag] = useState<Drag | null>(null);
  const [refocus, setRefocus] = useState<string | null>(null);
  /** A row's checkbox to focus once it is drawn (keyboard moves between rows). */
  const [focusCheck, setFocusCheck] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const body = useRef<HTMLTableSectionElement>(null);
  const headerCheck = useRef<HTMLInputElement>(null);
  const handles = useRef(new Map<string, HTMLButtonElement>());
  const checks = useRef(new Map<string, HTMLInputElement>());
  const [scrollMargin, setScrollMargin] = useState(0);

  const shown = drag ? moved(rows, drag.from, drag.to) : rows;
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    getItemKey: (index) => shown[index].key.id,
    scrollMargin,
  });

  // The rows start below the head inside the scrolling box: the virtualizer's `scrollMargin` is
  // that distance, from the box's content edge to the rows' box. Measured by their rectangles, not
  // `offsetTop`: the rows' box is positioned (it holds the rows placed in it), so its offsetParent
  // is not the table but some ancestor outside the scrolling box. Again whenever the head's height
  // changes (another language wraps its labels, a narrow pool hides it).
  useLayoutEffect(() => {
    const box = scroller.current;
    const rowsBox = body.current;
    if (!box || !rowsBox) return;
    const measure = () => setScrollMargin(rowsBox.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientTop + box.scrollTop);
    measure();
    const head = rowsBox.previousElementSibling;
    if (!head || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(head);
    return () => observer.disconnect();
  }, []);

  // A reorder moves the rows' elements, and a moved element loses focus: give it back to the moved
  // key's handle. Only when focus was lost, so a later reload never takes it from where the user
  // has put it since.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `rows` is what re-runs this: each new order moves the elements
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (refocus && lost) handles.current.get(refocus)?.focus();
  }, [refocus, rows]);

  // Keys just added may be far below in a long pool: the first of them is brought into view, first
  // in the table's box (which draws it), then in the page (the box itself may be below the fold).
  const firstFresh = fresh.find((id) => rows.some((r) => r.key.id === id));
  const [revealed, setRevealed] = useState<string | null>(null);
  const rowElements = useRef(new Map<string, HTMLTableRowElement>());
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
    const element = rowElements.current.get(firstFresh);
    if (element) {
      element.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
      setRevealed(firstFresh);
    }
  }, [firstFresh, revealed, items]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `items` is what re-runs this: the wanted row may have just been drawn
  useEffect(() => {
    if (!focusCheck) return;
    const box = checks.current.get(focusCheck);
    if (box) {
      box.focus();
      setFocusCheck(null);
    }
  }, [focusCheck, items]);

  const shownSelected = rows.reduce((n, r) => n + (selected.has(r.key.id) ? 1 : 0), 0);
  useEffect(() => {
    if (headerCheck.current) headerCheck.current.indeterminate = shownSelected > 0 && shownSelected < rows.length;
  }, [shownSelected, rows.length]);

  function move(index: number, to: number) {
    if (!onReorder || to < 0 || to >= rows.length || to === index) return;
    const id = rows[index].key.id;
    setRefocus(id);
    onReorder(moved(rows, index, to).map((r) => r.key.id), id);
  }

  function focusRow(index: number) {
    const target = Math.max(0, Math.min(rows.length - 1, index));
    virtualizer.scrollToIndex(target, { align: 'auto' });
    setFocusCheck(rows[target].key.id);
  }

  function checkKeys(event: ReactKeyboardEvent, index: number) {
    const page = Math.max(1, items.length - 2 * OVERSCAN);
    const to = { ArrowDown: index + 1, ArrowUp: index - 1, PageDown: index + page, PageUp: index - page, Home: 0, End: rows.length - 1 }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    focusRow(to);
  }

  function startDrag(event: ReactPointerEvent<HTMLButtonElement>, index: number) {
    if (event.button !== 0 || !onReorder) return;
    event.preventDefault();
    event.currentTarget.setPointerCapture?.(event.pointerId);
    // From the measured (or estimated) place of every row, drawn or not.
    const top = (body.current?.getBoundingClientRect().top ?? 0) - scrollMargin;
    const middles = virtualizer.measurementsCache.map((m) => top + m.start + m.size / 2);
    setDrag({ id: rows[index].key.id, from: index, to: index, middles });
  }

  function dragMove(event: ReactPointerEvent) {
    if (!drag) return;
    const y = event.clientY;
    const to = drag.middles.filter((m, i) => i !== drag.from && m < y).length;
    if (to !== drag.to) setDrag({ ...drag, to });
  }

  function endDrag() {
    if (!drag) return;
    setDrag(null);
    if (drag.to !== drag.from && onReorder) {
      setRefocus(drag.id);
      onReorder(moved(rows, drag.from, drag.to).map((r) => r.key.id), drag.id);
    }
  }

  const actions = useStable<RowActions>({
    element: (id, el) => {
      virtualizer.measureElement(el);
      if (el) rowElements.current.set(id, el);
      else rowElements.current.delete(id);
    },
    check: (id, el) => {
      if (el) checks.current.set(id, el);
      else checks.current.delete(id);
    },
    handle: (id, el) => {
      if (el) handles.current.set(id, el);
      else handles.current.delete(id);
    },
    select: onSelect,
    checkKeys,
    handleKeys: (event, index) => {
      if (event.key === 'ArrowUp' || event.key === 'ArrowDown') {
        event.preventDefault();
        move(index, index + (event.key === 'ArrowUp' ? -1 : 1));
      } else if (event.key === 'Home' || event.key === 'End') {
        event.preventDefault();
        move(index, event.key === 'Home' ? 0 : rows.length - 1);
      }
    },
    startDrag,
    dragMove,
    endDrag,
    cancelDrag: () => setDrag(null),
    weight: onWeight,
    toggle: onToggle,
    enable: onEnable,
    remove: onDelete,
    edit: onEdit,
    resetCooldown: onResetCooldown,
    cooldownEnd: onCooldownEnd,
    test: onTest,
  });

  return (
    <div className="key-table-scroll" ref={scroller} data-testid="key-list-scroll">
      <p id={hintId} className="visually-hidden">
        {onReorder ? t('key.moveHint') : t('table.reorderOff')}
      </p>
      <table className="key-table" aria-label={t('table.label')} aria-rowcount={rows.length + 1} data-testid="key-list">
        <thead className="key-table__head">
          <tr className="key-table__head-row" aria-rowindex={1}>
            <th scope="col" className="key-table__select">
              <input
                ref={headerCheck}
                type="checkbox"
                className="checkbox"
                aria-label={t('table.selectShown', { count: rows.length })}
                checked={rows.length > 0 && shownSelected === rows.length}
                onChange={(e) => onSelectShown(e.target.checked)}
                data-testid="key-select-shown"
              />
            </th>
            <th scope="col">
              <span className="visually-hidden">{t('table.colOrder')}</span>
            </th>
            {COLUMNS.map(({ column, label }) => {
              const active = sort.column === column;
              return (
                <th scope="col" key={column} aria-sort={active ? sort.direction : undefined}>
                  <button type="button" className="key-table__sort" onClick={() => onSort(column)} data-testid={`key-sort-${column}`}>
                    {t(label)}
                    <span aria-hidden="true" className="key-table__sort-mark">
                      {active ? (sort.direction === 'ascending' ? '▲' : '▼') : ''}
                    </span>
                  </button>
                </th>
              );
            })}
            <th scope="col">
              <span className="visually-hidden">{t('table.colActions')}</span>
              <ActionsHeadSizer />
            </th>
          </tr>
        </thead>
        {/* As high as every row together (getTotalSize counts from the rows' start, without the
            head above them), so the box around it is as high as the rows when they are few; each
            row is placed in it by its own transform. */}
        <tbody className="key-table__rows" ref={body} style={{ height: virtualizer.getTotalSize() }}>
          {items.map((item) => {
            const row = shown[item.index];
            const id = row.key.id;
            return (
              <KeyTableRow
                key={id}
                row={row}
                index={item.index}
                top={item.start - scrollMargin}
                name={keyName(row, unlabeled)}
                selected={selected.has(id)}
                fresh={fresh.includes(id)}
                dragging={drag?.id === id}
                reorderable={onReorder !== null}
                test={tests[id]}
                offset={offset}
                hintId={hintId}
                actions={actions}
              />
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/**
 * An object of functions whose identity never changes, each calling the latest of `current`'s
 * (updated after every render), so memoized rows can hold it without drawing again.
 */
function useStable<T extends object>(current: T): T {
  const latest = useRef(current);
  useLayoutEffect(() => {
    latest.current = current;
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: made once; `latest` carries every later `current`
  return useMemo(
    () =>
      Object.fromEntries(
        Object.keys(current).map((name) => [name, (...args: unknown[]) => (latest.current[name as keyof T] as (...a: unknown[]) => unknown)(...args)]),
      ) as T,
    [],
  );
}
