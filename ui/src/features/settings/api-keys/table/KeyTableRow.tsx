import { memo, type KeyboardEvent as ReactKeyboardEvent, type PointerEvent as ReactPointerEvent } from 'react';
import { Icon } from '../../../../components/Icon';
import { Switch } from '../../../../components/Switch';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { KeyCommands } from '../keyCommands';
import type { KeyRow } from '../keyRows';
import { KeyNameCell, KeyStateCell, KeyUsageCell } from './KeyRowCells';
import type { KeyTest } from '../useKeyTests';
import { WeightEditor } from './WeightEditor';

/**
 * What the table does with a row (KeyList keeps it, its identity never changes), so a row that
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
  commands: KeyCommands;
}

/**
 * One key of the table: a row of its own grid on the table's shared column widths
 * (`--key-columns`), placed by a transform at `top` in the rows' box, so a row coming in or going
 * out of view lays out itself only, never the rows around it or the head.
 */
export const KeyTableRow = memo(function KeyTableRow({ row, index, top, name, selected, fresh, dragging, reorderable, test, offset, hintId, actions, commands }: Props) {
  const { t } = useI18n();
  const { key } = row;
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

      <KeyNameCell apiKey={key} />

      <td className="key-row__weight">
        <span className="key-row__inline-label" aria-hidden="true">
          {t('pool.colWeight')}
        </span>
        <WeightEditor weight={key.weight} label={t('key.weightOf', { name })} onSave={(weight) => commands.weight(key.id, weight)} testId="key-weight" />
      </td>

      <KeyStateCell row={row} name={name} offset={offset} test={test} commands={commands} />
      <KeyUsageCell row={row} offset={offset} />

      <td className="key-row__enabled">
        <Switch checked={key.enabled} label={t('key.use', { name })} onChange={(enabled) => commands.toggle(key.id, enabled)} testId="key-enabled" />
      </td>

      <td className="key-row__actions">
        <button
          type="button"
          className="button button--small"
          aria-label={t('key.testLabel', { name })}
          aria-busy={test?.kind === 'testing' || undefined}
          disabled={test?.kind === 'testing'}
          onClick={() => commands.test(key.id)}
          data-testid="key-test"
        >
          {t('key.test')}
        </button>
        <button type="button" className="button button--small" aria-label={t('key.editLabel', { name })} aria-haspopup="dialog" onClick={() => commands.edit(row)} data-testid="key-edit">
          {t('key.edit')}
        </button>
        <button type="button" className="icon-button icon-button--danger" aria-label={t('key.deleteLabel', { name })} title={t('key.delete')} onClick={() => commands.remove(row)} data-testid="key-delete">
          <Icon name="trash" size={18} />
        </button>
      </td>
    </tr>
  );
});
