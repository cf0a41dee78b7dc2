import { useVirtualizer } from '@tanstack/react-virtual';
import { useId, useLayoutEffect, useRef, useState } from 'react';
import { useI18n } from '../../../../i18n/I18nProvider';
import { keyName, type KeyRow } from '../keyRows';
import type { Sort, SortColumn } from './keyTable';
import { KeyTableHead } from './KeyTableHead';
import type { KeyCommands } from '../keyCommands';
import { KeyTableRow, type RowActions } from './KeyTableRow';
import { useCheckFocus, useRevealFresh } from './useRowFocus';
import { type Reorder, useRowReorder } from './useRowReorder';
import type { KeyTest } from '../useKeyTests';
import { useStable } from '../useStable';

interface Props {
  /** The rows shown (filtered, searched, sorted), in the order shown. */
  rows: KeyRow[];
  offset: number;
  /** What a row asks of the pool; passed to the rows as it is. */
  commands: KeyCommands;
  /** Keys just added: marked, and the first scrolled into view. */
  fresh: readonly string[];
  /** Null while the rows are not the whole pool in its own order (filtered, searched or sorted). */
  onReorder: Reorder | null;
  tests: Record<string, KeyTest>;
  sort: Sort;
  onSort: (column: Exclude<SortColumn, 'order'>) => void;
  selected: ReadonlySet<string>;
  /** A row's checkbox changed; `range`: shift was held (from the last row clicked to this one). */
  onSelect: (id: string, checked: boolean, range: boolean) => void;
  /** The header's checkbox: every shown row, or none. */
  onSelectShown: (checked: boolean) => void;
}

/** A row's height before it is measured (a key with nothing more to say); rows measure themselves once drawn. */
export const ROW_HEIGHT = 60;
/**
 * Rows drawn beyond the visible ones on each side, so Tab and the arrow keys find the next row
 * drawn (focus then scrolls it into view, which draws the ones after it). Few: a fling draws
 * every drawn row anew on each step.
 */
const OVERSCAN = 3;

/**
 * The shown keys as a table (role=table: a header row, then one row per key, with
 * aria-rowcount/aria-rowindex so a screen reader knows the whole size while only the rows near the
 * view are drawn; @tanstack/react-virtual decides which). Sorting: the column headers' buttons.
 * Selecting: a checkbox per row (shift-click selects the range from the last one clicked), the
 * header's for every shown row; Up/Down/Home/End on a row's checkbox move to the next row's, drawing
 * it first. Reordering (only while the whole pool is shown in its own order): drag a row by its
 * handle, or focus the handle and press the arrow keys; focus stays on the moved key's handle.
 */
export function KeyList({ rows, offset, commands, fresh, onReorder, tests, sort, onSort, selected, onSelect, onSelectShown }: Props) {
  const { t } = useI18n();
  const unlabeled = t('key.unlabeled');
  const hintId = useId();
  const scroller = useRef<HTMLDivElement>(null);
  const body = useRef<HTMLTableSectionElement>(null);
  const [scrollMargin, setScrollMargin] = useState(0);

  const reorder = useRowReorder(rows, onReorder);
  const { shown } = reorder;
  const virtualizer = useVirtualizer({
    count: shown.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: OVERSCAN,
    getItemKey: (index) => shown[index].key.id,
    scrollMargin,
  });
  const items = virtualizer.getVirtualItems();
  const focus = useCheckFocus(rows, virtualizer, Math.max(1, items.length - 2 * OVERSCAN));
  const revealElement = useRevealFresh(rows, fresh, virtualizer);

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

  /** Every row's vertical middle from its measured (or estimated) place, drawn or not. */
  const middles = () => {
    const top = (body.current?.getBoundingClientRect().top ?? 0) - scrollMargin;
    return virtualizer.measurementsCache.map((m) => top + m.start + m.size / 2);
  };

  const actions = useStable<RowActions>({
    element: (id, el) => {
      virtualizer.measureElement(el);
      revealElement(id, el);
    },
    check: focus.check,
    handle: reorder.handle,
    select: onSelect,
    checkKeys: focus.checkKeys,
    handleKeys: reorder.handleKeys,
    startDrag: (event, index) => reorder.startDrag(event, index, middles),
    dragMove: reorder.dragMove,
    endDrag: reorder.endDrag,
    cancelDrag: reorder.cancelDrag,
  });

  const shownSelected = rows.reduce((n, r) => n + (selected.has(r.key.id) ? 1 : 0), 0);
  return (
    <div className="key-table-scroll" ref={scroller} data-testid="key-list-scroll">
      <p id={hintId} className="visually-hidden">
        {onReorder ? t('key.moveHint') : t('table.reorderOff')}
      </p>
      <table className="key-table" aria-label={t('table.label')} aria-rowcount={rows.length + 1} data-testid="key-list">
        <KeyTableHead shownCount={rows.length} shownSelected={shownSelected} onSelectShown={onSelectShown} sort={sort} onSort={onSort} />
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
                dragging={reorder.dragging === id}
                reorderable={onReorder !== null}
                test={tests[id]}
                offset={offset}
                hintId={hintId}
                actions={actions}
                commands={commands}
              />
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
