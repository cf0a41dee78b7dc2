import { useBackendNow } from '../../../../hooks/useCountdown';
import type { MessageKey } from '../../../../i18n';
import { formatClockTime } from '../../../../i18n/format';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { KeyWindows, PlanWindow } from '../../../../ipc/bindings';

interface Props {
  windows: KeyWindows;
  /** Backend clock minus UI clock. */
  offset: number;
}

/** A window by its span: `5-hour window`, and a single week, month or day by its name. */
function spanKey(window: PlanWindow): { key: MessageKey; count: number } {
  const { count, unit } = window.span;
  if (count === 1 && unit !== 'hour') return { key: `windows.one${unit[0].toUpperCase()}${unit.slice(1)}` as MessageKey, count };
  return { key: `windows.${unit}` as MessageKey, count };
}

/**
 * What a coding-plan key has left of each of its windows, as its provider last answered:
 * `5-hour window 68% left, resets 14:00 · week 40% left`, the reset in the backend's time; or why
 * nothing was read (the key stays usable then). The read's time in the title.
 */
export function KeyWindowsLine({ windows, offset }: Props) {
  const { t, intlTag } = useI18n();
  const now = useBackendNow(offset, windows.windows.flatMap((w) => (w.resetsAt === null ? [] : [w.resetsAt])));
  const readAt = new Intl.DateTimeFormat(intlTag, { dateStyle: 'short', timeStyle: 'short' }).format(windows.readAt);
  const percent = new Intl.NumberFormat(intlTag, { style: 'percent', maximumFractionDigits: 0 });
  let text: string;
  if (windows.problem !== null) {
    text = t('windows.unreadable', { reason: windows.problem });
  } else {
    text = windows.windows
      .map((w) => {
        const { key, count } = spanKey(w);
        const left = t('windows.left', { window: t(key, { count }), left: percent.format(Math.max(0, 1 - w.used)) });
        const resets = w.resetsAt !== null && w.resetsAt > now ? t('windows.resets', { time: formatClockTime(w.resetsAt, now, intlTag) }) : null;
        return resets ? `${left}, ${resets}` : left;
      })
      .join(' · ');
  }
  const spent = windows.problem === null && windows.windows.some((w) => w.used >= 1 && w.resetsAt !== null && w.resetsAt > now);
  return (
    <div className="key-balance" data-testid="key-windows" data-state={windows.problem !== null ? 'unreadable' : spent ? 'spent' : 'left'} title={t('balance.readAt', { time: readAt })}>
      {text}
    </div>
  );
}
