import { memo, type KeyboardEvent as ReactKeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import { Icon } from '../../../components/Icon';
import { Switch } from '../../../components/Switch';
import { formatRelative } from '../../../i18n/format';
import { formatNumber } from '../../../i18n/problems';
import { useI18n } from '../../../i18n/I18nProvider';
import { KeyBudget } from './KeyBudget';
import { KeyTestResultLine } from './KeyTestResult';
import type { KeyRow } from './keyRows';
import { ModelRests } from './ModelRests';
import { StateBadge } from './StateBadge';
import type { KeyTest } from './useKeyTests';
import { WeightEditor } from './WeightEditor';

/**
 * What a row does, as one object whose identity never changes (KeyList keeps it), so a row that
 * scrolls into view or stays in it is not drawn again for a new callback: only its own data
 * (the key, its place, its selection, its test) draws it again.
 */
export interface RowActions {
  /** The row's element came or went: measured by the virtualizer, kept to scroll to and focus. */
  element: (id: string, el: HTMLTableRowElement | null) => void;
  check: (id: string, el: HTMLInputElement | null) => void;
  handle: (id: string, el: HTMLButtonElement | null) => void;
  select: (id: string, checked: boolean, range: boolean) => void;
  /** Up/Down/Home/End/PageUp/PageDown on a row's checkbox. */
  checkKeys: (event: ReactKeyboardEvent, index: number) => void;
  /** Arrow keys, Home and End on a row's handle (reordering). */
  handleKeys: (event: ReactKeyboardEvent, index: number) => void;
  startDrag: (event: ReactPointerEvent<HTMLButtonElement>, index: number) => void;
  dragMove: (event: ReactPointerEvent) => void;
  endDrag: () => void;
  cancelDrag: () => void;
  weight: (id: string, weight: number) => Promise<unknown>;
  toggle: (id: string, enabled: boolean) => void;
  enable: (id: string) => void;
  remove: (row: KeyRow) => void;
  edit: (row: KeyRow) => void;
  resetCooldown: (id: string) => void;
  cooldownEnd: () => void;
  test: (id: string) => void;
}

interface Props {
  row: KeyRow;
  /** Its place among the rows shown, from 0. */
  index: number;
  /** Its top inside the rows' box, in px (the virtualizer's place for it). */
  top: number;
  name: string;
  selected: boolean;
  fresh: boolean;
  dragging: boolean;
  /** Whether the pool's order can be changed here (not while sorted). */
  reorderable: boolean;
  test: KeyTest | undefined;
  offset: number;
  /** The id of the hidden text that says how reordering works (or why it is off). */
  hintId: string;
  actions: RowActions;
}

/**
 * One key of the table: a row of its own grid on the table's shared column widths
 * (`--key-columns`), placed by a transform at `top` in the rows' box, so a row coming in or going
 * out of view lays out itself only, never the rows around it or the head.
 */
export const KeyTableRow = memo(function KeyTableRow({ row, index, top, name, selected, fresh, dragging, reorderable, test, offset, hintId, actions }: Props) {
  const { t, intlTag } = useI18n();
  const { key } = row;
  const now = Date.now() + offset;
  return (
    <tr
      aria-rowindex={index + 2}
      data-index={index}
      ref={(el) => actions.element(key.id, el)}
      style={{ transform: `translateY(${top}px)` }}
      className={`key-row${dragging ? ' key-row--dragging' : ''}${key.enabled ? '' : ' key-row--off'}${fresh ? ' key-row--fresh' : ''}${selected ? ' key-row--selected' : ''}`}
      data-testid="key-row"
      data-key-id={key.id}
    >
      <td className="key-row__select">
        <input
          type="checkbox"
          className="checkbox"
          aria-label={t('table.select', { name })}
          checked={selected}
          ref={(el) => actions.check(key.id, el)}
          onClick={(e) => actions.select(key.id, e.currentTarget.checked, e.shiftKey)}
          onChange={() => {}}
          onKeyDown={(e) => actions.checkKeys(e, index)}
          data-testid="key-select"
        />
      </td>
      <td>
        <button
          type="button"
          className="drag-handle"
          aria-label={t('key.move', { name })}
          aria-describedby={hintId}
          aria-disabled={reorderable ? undefined : true}
          title={reorderable ? t('key.moveHint') : t('table.reorderOff')}
          ref={(el) => actions.handle(key.id, el)}
          onPointerDown={(e) => actions.startDrag(e, index)}
          onPointerMove={actions.dragMove}
          onPointerUp={actions.endDrag}
          onPointerCancel={actions.cancelDrag}
          onKeyDown={(e) => actions.handleKeys(e, index)}
          data-testid="key-drag-handle"
        >
          <Icon name="grip" size={16} />
        </button>
      </td>

      <td className="key-row__name">
        {/* Cut to the column when long; the whole of it in its tooltip. */}
        <span className={`key-row__label${key.label ? '' : ' key-row__label--none'}`} title={key.label ?? undefined} data-testid="key-label">
          {key.label ?? t('key.unlabeled')}
        </span>
        <span className="key-row__preview">
          <code title={key.apiKeyPreview} data-testid="key-preview">
            {key.apiKeyPreview}
          </code>
          {key.isEnvRef && (
            // Truncated when the column is narrow (long translations); the whole text in its tooltip.
            <span className="tag key-row__tag" title={t('key.envRef')} data-testid="key-env-tag">
              {t('key.envRef')}
            </span>
          )}
          {key.quotaGroup !== null && (
            <span className="tag key-row__tag" title={t('key.quotaGroupHint', { group: key.quotaGroup })} data-testid="key-quota-group">
              {t('key.quotaGroup', { group: key.quotaGroup })}
            </span>
          )}
        </span>
        {(key.rpmLimit !== null || key.maxConcurrent !== null) && (
          <span className="key-row__limits" data-testid="key-limits">
            {t('limits.summary', {
              limits: [
                key.rpmLimit !== null ? t('limits.rpmShort', { count: key.rpmLimit }) : null,
                key.maxConcurrent !== null ? t('limits.concurrentShort', { count: key.maxConcurrent }) : null,
              ]
                .filter(Boolean)
                .join(' · '),
            })}
          </span>
        )}
      </td>

      <td className="key-row__weight">
        <span className="key-row__inline-label" aria-hidden="true">
          {t('pool.colWeight')}
        </span>
        <WeightEditor weight={key.weight} label={t('key.weightOf', { name })} onSave={(weight) => actions.weight(key.id, weight)} testId="key-weight" />
      </td>

      <td className="key-row__state">
        <StateBadge state={row.state} offset={offset} onCooldownEnd={actions.cooldownEnd} testId="key-state" />
        {row.state.kind !== 'disabled' && <ModelRests budgets={row.budgets} offset={offset} name={name} onEnd={actions.cooldownEnd} />}
        {row.state.kind !== 'disabled' && <KeyBudget budgets={row.budgets} offset={offset} name={name} />}
        {row.state.kind === 'cooling' && (
          <button
            type="button"
            className="link-button"
            aria-label={t('key.resetCooldownLabel', { name })}
            onClick={() => actions.resetCooldown(key.id)}
            data-testid="key-reset-cooldown"
          >
            {t('key.resetCooldown')}
          </button>
        )}
        {test && <KeyTestResultLine test={test} />}
        {!key.enabled && test?.kind === 'done' && test.result.ok && (
          <button type="button" className="link-button" aria-label={t('key.enableLabel', { name })} onClick={() => actions.enable(key.id)} data-testid="key-enable">
            {t('key.enable')}
          </button>
        )}
      </td>

      <td className="key-row__usage" data-testid="key-usage">
        <span className="key-row__counts">
          <span className="key-row__today" data-testid="key-today">
            {/* Cut to the column when narrow; the whole of each in its tooltip. */}
            <span title={t('usage.todayRequests', { count: row.today.requests })}>{t('usage.todayRequests', { count: row.today.requests })}</span>{' '}
            <span title={t('usage.todayTokens', { count: row.today.tokens })}>{t('usage.todayTokens', { count: row.today.tokens })}</span>
          </span>
          {row.today.failures > 0 && (
            <span className="key-row__failures" data-testid="key-today-failures">
              {t('usage.failures', { count: formatNumber(t, row.today.failures) })}
            </span>
          )}
          {row.inFlight > 0 && <span data-testid="key-in-flight">{t('usage.inFlight', { count: row.inFlight })}</span>}
        </span>
        <span className="muted">
          {row.lastUsedAt === null ? t('usage.never') : t('usage.lastUsed', { when: formatRelative(row.lastUsedAt, now, intlTag) })}
        </span>
      </td>

      <td className="key-row__enabled">
        <Switch checked={key.enabled} label={t('key.use', { name })} onChange={(enabled) => actions.toggle(key.id, enabled)} testId="key-enabled" />
      </td>

      <td className="key-row__actions">
        <button
          type="button"
          className="button button--small"
          aria-label={t('key.testLabel', { name })}
          aria-busy={test?.kind === 'testing' || undefined}
          disabled={test?.kind === 'testing'}
          onClick={() => actions.test(key.id)}
          data-testid="key-test"
        >
          {t('key.test')}
        </button>
        <button type="button" className="button button--small" aria-label={t('key.editLabel', { name })} aria-haspopup="dialog" onClick={() => actions.edit(row)} data-testid="key-edit">
          {t('key.edit')}
        </button>
        <button type="button" className="icon-button icon-button--danger" aria-label={t('key.deleteLabel', { name })} title={t('key.delete')} onClick={() => actions.remove(row)} data-testid="key-delete">
          <Icon name="trash" size={18} />
        </button>
      </td>
    </tr>
  );
});

/**
 * The actions column's head: as wide as a row's buttons (the same three, unseen and out of the
 * accessibility tree), so the head, a grid of its own, gets the rows' column widths.
 */
export function ActionsHeadSizer() {
  const { t } = useI18n();
  return (
    <span className="key-table__sizer" aria-hidden="true">
      <span className="button button--small">{t('key.test')}</span>
      <span className="button button--small">{t('key.edit')}</span>
      <span className="icon-button" />
    </span>
  );
}
