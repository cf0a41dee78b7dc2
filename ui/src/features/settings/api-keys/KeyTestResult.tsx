import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, probeText } from '../../../i18n/problems';
import type { KeyTest } from './useKeyTests';

/** `OK · 123 ms`, or what went wrong, worded from the problem (the provider's words quoted). */
export function KeyTestResultLine({ test }: { test: KeyTest }) {
  const { t } = useI18n();
  if (test.kind === 'testing') {
    return (
      <span className="key-test key-test--running" data-testid="key-test-result" data-result="testing">
        {t('key.testing')}
      </span>
    );
  }
  if (test.kind === 'failed') {
    return (
      <span className="key-test key-test--bad" role="status" data-testid="key-test-result" data-result="failed">
        {t('pool.actionFailed', { message: errorText(t, test.error) })}
      </span>
    );
  }
  const { result } = test;
  const text = result.ok
    ? t('key.testOk', { ms: result.latencyMs })
    : result.problem
      ? probeText(t, result.problem, result.status, result.message)
      : result.status !== null
        ? t('key.testFailedStatus', { status: result.status })
        : t('error.provider');
  return (
    <span className={`key-test ${result.ok ? 'key-test--ok' : 'key-test--bad'}`} role="status" data-testid="key-test-result" data-result={result.ok ? 'ok' : 'bad'}>
      {text}
    </span>
  );
}
