import { useEffect, useEffectEvent, useRef } from 'react';
import { formatCountdown } from '../../../../clock';
import { useBackendNow } from '../../../../hooks/useCountdown';
import { formatClockTime } from '../../../../i18n/format';
import { useI18n } from '../../../../i18n/I18nProvider';
import type { Budget } from '../../../../ipc/bindings';
import { modelRests } from '../keyRows';

interface Props {
  budgets: readonly Budget[];
  /** Backend clock minus UI clock. */
  offset: number;
  /** The key's name, for the label of the list. */
  name: string;
  /** Called when a rest ends, to fetch the pool's new view. */
  onEnd: () => void;
}

/**
 * The models of a key that rest while it serves the others: "Daily quota used up until 09:00"
 * (the provider's day end, in the user's time and language) or a cooldown counting down, each
 * beside its model. Nothing shows while none rests.
 */
export function ModelRests({ budgets, offset, name, onEnd }: Props) {
  const { t, intlTag } = useI18n();
  const ends = budgets.flatMap((b) => [b.coolingUntil, b.usedUpUntil].filter((at): at is number => at !== null));
  const now = useBackendNow(offset, ends);
  const rests = modelRests(budgets, now);
  const end = useEffectEvent(onEnd);
  // A rest that was shown has ended: the pool's view has changed.
  const shown = useRef(rests.length);
  useEffect(() => {
    if (rests.length < shown.current) end();
    shown.current = rests.length;
  }, [rests.length]);

  if (rests.length === 0) return null;
  return (
    <ul className="model-rests" aria-label={t('state.modelRests', { name })} data-testid="key-model-rests">
      {rests.map((rest) => (
        <li key={rest.scope} className="model-rest" data-testid="key-model-rest" data-kind={rest.kind} data-scope={rest.scope}>
          <span className="model-rest__model">{rest.scope}</span>
          {rest.kind === 'usedUp' ? (
            <span className="badge badge--exhausted" title={t('state.usedUpHint')}>
              {t('state.usedUp', { time: formatClockTime(rest.until, now, intlTag) })}
            </span>
          ) : (
            <span className="badge badge--cooling" role="timer">
              {t('state.cooling', { time: formatCountdown(rest.until - now) })}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}
