import { useEffect, useId, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react';
import { Icon } from '../../../components/Icon';
import { Switch } from '../../../components/Switch';
import { formatRelative } from '../../../i18n/format';
import { formatNumber } from '../../../i18n/problems';
import { useI18n } from '../../../i18n/I18nProvider';
import { KeyBudget } from './KeyBudget';
import { KeyTestResultLine } from './KeyTestResult';
import { moved, type KeyRow } from './keyRows';
import { ModelRests } from './ModelRests';
import type { KeyTest } from './useKeyTests';
import { StateBadge } from './StateBadge';
import { WeightEditor } from './WeightEditor';

interface Props {
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
  onReorder: (ids: string[], movedId: string) => void;
  onCooldownEnd: () => void;
  tests: Record<string, KeyTest>;
  onTest: (id: string) => void;
}

interface Drag {
  id: string;
  from: number;
  to: number;
  /** The vertical middles of the rows when the drag began. */
  middles: number[];
}

export function keyName(row: KeyRow, unlabeled: string): string {
  return row.key.label ?? (row.key.apiKeyPreview || unlabeled);
}

/**
 * The pool's keys in sortOrder, one aligned row each. Reordering: drag a row by its handle, or
 * focus the handle and press the arrow keys; focus stays on the moved key's handle.
 */
export function KeyList({ rows, offset, onWeight, onToggle, onEnable, onDelete, onEdit, fresh, onResetCooldown, onReorder, onCooldownEnd, tests, onTest }: Props) {
  const { t, intlTag } = useI18n();
  const hintId = useId();
  const [drag, setDrag] = useState<Drag | null>(null);
  const [refocus, setRefocus] = useState<string | null>(null);
  const items = useRef(new Map<string, HTMLLIElement>());
  const handles = useRef(new Map<string, HTMLButtonElement>());

  // A reorder moves the rows' elements, and a moved element loses focus: give it back to the moved
  // key's handle. Only when focus was lost, so a later reload never takes it from where the user
  // has put it since.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `rows` is what re-runs this: each new order moves the elements
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (refocus && lost) handles.current.get(refocus)?.focus();
  }, [refocus, rows]);

  // Keys just added go below the fold in a long pool: the first of them is brought into view.
  const firstFresh = fresh.find((id) => rows.some((r) => r.key.id === id));
  useEffect(() => {
    if (firstFresh) items.current.get(firstFresh)?.scrollIntoView?.({ block: 'nearest', behavior: 'smooth' });
  }, [firstFresh]);

  const shown = drag ? moved(rows, drag.from, drag.to) : rows;
  const now = Date.now() + offset;

  function move(index: number, to: number) {
    if (to < 0 || to >= rows.length || to === index) return;
    const id = rows[index].key.id;
    setRefocus(id);
    onReorder(moved(rows, index, to).map((r) => r.key.id), id);
  }

  function startDrag(event: ReactPointerEvent<HTMLButtonElement>, index: number) {
    if (event.button !== 0) return;
    event.preventDefault();
    event.currentTarget.setPointerCapture?.(event.pointerId);
    const middles = rows.map((r) => {
      const rect = items.current.get(r.key.id)?.getBoundingClientRect();
      return rect ? rect.top + rect.height / 2 : 0;
    });
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
    if (drag.to !== drag.from) {
      setRefocus(drag.id);
      onReorder(moved(rows, drag.from, drag.to).map((r) => r.key.id), drag.id);
    }
  }

  return (
    <div className="key-table" data-testid="key-list">
      <div className="key-table__head" aria-hidden="true">
        <span />
        <span>{t('pool.colKey')}</span>
        <span>{t('pool.colWeight')}</span>
        <span>{t('pool.colState')}</span>
        <span>{t('pool.colUsage')}</span>
        <span>{t('pool.colEnabled')}</span>
        <span />
      </div>
      <p id={hintId} className="visually-hidden">
        {t('key.moveHint')}
      </p>
      <ol className="key-table__rows">
        {shown.map((row, index) => {
          const { key } = row;
          const name = keyName(row, t('key.unlabeled'));
          return (
            <li
              key={key.id}
              ref={(el) => {
                if (el) items.current.set(key.id, el);
                else items.current.delete(key.id);
              }}
              className={`key-row${drag?.id === key.id ? ' key-row--dragging' : ''}${key.enabled ? '' : ' key-row--off'}${fresh.includes(key.id) ? ' key-row--fresh' : ''}`}
              data-testid="key-row"
              data-key-id={key.id}
            >
              <button
                type="button"
                className="drag-handle"
                aria-label={t('key.move', { name })}
                aria-describedby={hintId}
                title={t('key.moveHint')}
                ref={(el) => {
                  if (el) handles.current.set(key.id, el);
                  else handles.current.delete(key.id);
                }}
                onPointerDown={(e) => startDrag(e, index)}
                onPointerMove={dragMove}
                onPointerUp={endDrag}
                onPointerCancel={() => setDrag(null)}
                onKeyDown={(e) => {
                  if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
                    e.preventDefault();
                    move(index, index + (e.key === 'ArrowUp' ? -1 : 1));
                  } else if (e.key === 'Home' || e.key === 'End') {
                    e.preventDefault();
                    move(index, e.key === 'Home' ? 0 : rows.length - 1);
                  }
                }}
                data-testid="key-drag-handle"
              >
                <Icon name="grip" size={16} />
              </button>

              <div className="key-row__name">
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
              </div>

              <div className="key-row__weight">
                <span className="key-row__inline-label" aria-hidden="true">
                  {t('pool.colWeight')}
                </span>
                <WeightEditor
                  weight={key.weight}
                  label={t('key.weightOf', { name })}
                  onSave={(weight) => onWeight(key.id, weight)}
                  testId="key-weight"
                />
              </div>

              <div className="key-row__state">
                <StateBadge state={row.state} offset={offset} onCooldownEnd={onCooldownEnd} testId="key-state" />
                {row.state.kind !== 'disabled' && <ModelRests budgets={row.budgets} offset={offset} name={name} onEnd={onCooldownEnd} />}
                {row.state.kind !== 'disabled' && <KeyBudget budgets={row.budgets} offset={offset} name={name} />}
                {row.state.kind === 'cooling' && (
                  <button
                    type="button"
                    className="link-button"
                    aria-label={t('key.resetCooldownLabel', { name })}
                    onClick={() => onResetCooldown(key.id)}
                    data-testid="key-reset-cooldown"
                  >
                    {t('key.resetCooldown')}
                  </button>
                )}
                {tests[key.id] && <KeyTestResultLine test={tests[key.id]} />}
                {!key.enabled && tests[key.id]?.kind === 'done' && (tests[key.id] as Extract<KeyTest, { kind: 'done' }>).result.ok && (
                  <button
                    type="button"
                    className="link-button"
                    aria-label={t('key.enableLabel', { name })}
                    onClick={() => onEnable(key.id)}
                    data-testid="key-enable"
                  >
                    {t('key.enable')}
                  </button>
                )}
              </div>

              <div className="key-row__usage" data-testid="key-usage">
                <span className="key-row__counts">
                  <span className="key-row__today" data-testid="key-today">
                    <span>{t('usage.todayRequests', { count: row.today.requests })}</span>{' '}
                    <span>{t('usage.todayTokens', { count: row.today.tokens })}</span>
                  </span>
                  {row.today.failures > 0 && (
                    <span className="key-row__failures" data-testid="key-today-failures">
                      {t('usage.failures', { count: formatNumber(t, row.today.failures) })}
                    </span>
                  )}
                  {row.inFlight > 0 && <span data-testid="key-in-flight">{t('usage.inFlight', { count: row.inFlight })}</span>}
                </span>
                <span className="muted">
                  {row.lastUsedAt === null
                    ? t('usage.never')
                    : t('usage.lastUsed', { when: formatRelative(row.lastUsedAt, now, intlTag) })}
                </span>
              </div>

              <div className="key-row__enabled">
                <Switch
                  checked={key.enabled}
                  label={t('key.use', { name })}
                  onChange={(enabled) => onToggle(key.id, enabled)}
                  testId="key-enabled"
                />
              </div>

              <div className="key-row__actions">
                <button
                  type="button"
                  className="button button--small"
                  aria-label={t('key.testLabel', { name })}
                  aria-busy={tests[key.id]?.kind === 'testing' || undefined}
                  disabled={tests[key.id]?.kind === 'testing'}
                  onClick={() => onTest(key.id)}
                  data-testid="key-test"
                >
                  {t('key.test')}
                </button>
                <button
                  type="button"
                  className="button button--small"
                  aria-label={t('key.editLabel', { name })}
                  aria-haspopup="dialog"
                  onClick={() => onEdit(row)}
                  data-testid="key-edit"
                >
                  {t('key.edit')}
                </button>
                <button
                  type="button"
                  className="icon-button icon-button--danger"
                  aria-label={t('key.deleteLabel', { name })}
                  title={t('key.delete')}
                  onClick={() => onDelete(row)}
                  data-testid="key-delete"
                >
                  <Icon name="trash" size={18} />
                </button>
              </div>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
