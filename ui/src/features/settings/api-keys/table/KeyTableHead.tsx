import { useEffect, useRef } from 'react';
import type { MessageKey } from '../../../../i18n';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { Sort, SortColumn } from './keyTable';

const COLUMNS: { column: Exclude<SortColumn, 'order'>; label: MessageKey }[] = [
  { column: 'key', label: 'pool.colKey' },
  { column: 'weight', label: 'pool.colWeight' },
  { column: 'state', label: 'pool.colState' },
  { column: 'usage', label: 'pool.colUsage' },
  { column: 'enabled', label: 'pool.colEnabled' },
];

interface Props {
  /** Rows shown, and how many of them are selected. */
  shownCount: number;
  shownSelected: number;
  /** The header's checkbox: every shown row, or none. */
  onSelectShown: (checked: boolean) => void;
  sort: Sort;
  onSort: (column: Exclude<SortColumn, 'order'>) => void;
}

/**
 * The table's head row: a checkbox for every shown row (mixed while some are selected), and a
 * sort button per column whose header says how the table is sorted.
 */
export function KeyTableHead({ shownCount, shownSelected, onSelectShown, sort, onSort }: Props) {
  const { t } = useI18n();
  const headerCheck = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (headerCheck.current) headerCheck.current.indeterminate = shownSelected > 0 && shownSelected < shownCount;
  }, [shownSelected, shownCount]);

  return (
    <thead className="key-table__head">
      <tr className="key-table__head-row" aria-rowindex={1}>
        <th scope="col" className="key-table__select">
          <input
            ref={headerCheck}
            type="checkbox"
            className="checkbox"
            aria-label={t('table.selectShown', { count: shownCount })}
            checked={shownCount > 0 && shownSelected === shownCount}
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
              <button type="button" className="key-table__sort" title={t(label)} onClick={() => onSort(column)} data-testid={`key-sort-${column}`}>
                <span className="key-table__sort-label">{t(label)}</span>
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
  );
}

/**
 * The actions column's head: as wide as a row's buttons (the same three as KeyTableRow's, unseen
 * and out of the accessibility tree), so the head, a grid of its own, gets the rows' column widths.
 */
function ActionsHeadSizer() {
  const { t } = useI18n();
  return (
    <span className="key-table__sizer" aria-hidden="true">
      <span className="button button--small">{t('key.test')}</span>
      <span className="button button--small">{t('key.edit')}</span>
      <span className="icon-button" />
    </span>
  );
}
