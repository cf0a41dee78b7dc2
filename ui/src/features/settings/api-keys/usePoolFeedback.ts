import { useState } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText } from '../../../i18n/problems';

/**
 * What the section says about what was done: a polite announcement, or a failure shown above the
 * list (an action from a row or the bulk bar has no field to show it at).
 */
export function usePoolFeedback() {
  const { t } = useI18n();
  const [announcement, setAnnouncement] = useState('');
  const [problem, setProblem] = useState<string>();
  /** A bulk action is running (the bar's buttons wait). */
  const [busy, setBusy] = useState(false);

  const failed = (error: unknown) => setProblem(t('pool.actionFailed', { message: errorText(t, error) }));

  return {
    announcement,
    problem,
    busy,
    announce: setAnnouncement,
    /** Runs an action from a row; `done` is announced once it worked. */
    attempt(action: () => Promise<unknown>, done?: string) {
      setProblem(undefined);
      action().then(() => done && setAnnouncement(done), failed);
    },
    /** Runs a bulk action on the selection; its result is announced. */
    bulk<T>(action: () => Promise<T>, done: (result: T) => string) {
      setProblem(undefined);
      setBusy(true);
      action().then(
        (result) => {
          setBusy(false);
          setAnnouncement(done(result));
        },
        (error: unknown) => {
          setBusy(false);
          failed(error);
        },
      );
    },
  };
}

export type PoolFeedback = ReturnType<typeof usePoolFeedback>;
