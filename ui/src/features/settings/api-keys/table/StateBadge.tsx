import { useEffect, useEffectEvent } from 'react';
import { formatCountdown } from '../../../../clock';
import { useCountdown } from '../../../../hooks/useCountdown';
import { formatClockTime } from '../../../../i18n/format';
import { useI18n } from '../../../../i18n/I18nProvider';
import { httpStatusOf, type RowState } from '../keyRows';

interface Props {
  state: RowState;
  /** Backend clock minus UI clock, so countdowns use the backend's time. */
  offset: number;
  /** Called once when a cooldown reaches zero, to fetch the pool's new view. */
  onCooldownEnd: () => void;
  testId?: string;
}

/** Active; its variable not set; cooling with a live countdown; out of credit with its next check; disabled with why and when. */
export function StateBadge({ state, offset, onCooldownEnd, testId }: Props) {
  const { t, intlTag } = useI18n();
  switch (state.kind) {
    case 'active':
      return (
        <span className="badge badge--active" data-testid={testId} data-state="active">
          {t('state.active')}
        </span>
      );
    case 'unsetVar':
      return (
        <span className="badge badge--error" title={t('state.unsetVarHint', { name: state.name })} data-testid={testId} data-state="unsetVar">
          {t('state.unsetVar')}
        </span>
      );
    case 'unavailable':
      return (
        <span className="badge badge--error" title={t('state.unavailableHint')} data-testid={testId} data-state="unavailable">
          {t('state.unavailable')}
        </span>
      );
    case 'cooling':
      return <CoolingBadge until={state.until} offset={offset} onEnd={onCooldownEnd} testId={testId} />;
    case 'exhausted': {
      const now = Date.now() + offset;
      return (
        <span className="badge badge--exhausted" title={t('state.exhaustedHint')} data-testid={testId} data-state="exhausted">
          {state.nextProbeAt === null
            ? t('state.exhaustedNoProbe')
            : t('state.exhausted', { time: formatClockTime(state.nextProbeAt, now, intlTag) })}
        </span>
      );
    }
    case 'disabled': {
      const now = Date.now() + offset;
      const time = state.at === null ? null : formatClockTime(state.at, now, intlTag);
      const status = state.reason ? httpStatusOf(state.reason) : null;
      const text =
        state.reason === null || time === null
          ? t('state.off')
          : status
            ? t('state.disabledAfter', { status, time })
            : t('state.disabledReason', { reason: state.reason, time });
      return (
        <span className={`badge ${state.reason ? 'badge--error' : 'badge--off'}`} data-testid={testId} data-state="disabled">
          {text}
        </span>
      );
    }
  }
}

function CoolingBadge({ until, offset, onEnd, testId }: { until: number; offset: number; onEnd: () => void; testId?: string }) {
  const { t } = useI18n();
  const left = useCountdown(until, offset);
  // The parent's latest callback, without re-running the effect when its identity changes:
  // at zero that would call it again on every render of the parent.
  const end = useEffectEvent(onEnd);

  // At zero it calls `onEnd` once.
  useEffect(() => {
    if (left === 0) end();
  }, [left]);

  return (
    // role="timer": a countdown that screen readers do not announce every second.
    <span className="badge badge--cooling" role="timer" data-testid={testId} data-state="cooling">
      {left === 0 ? t('state.coolingDone') : t('state.cooling', { time: formatCountdown(left) })}
    </span>
  );
}
