import { useI18n } from '../../../i18n/I18nProvider';
import type { KeyTest } from './useKeyTests';

/** `OK · 123 ms`, `HTTP 401 · message`, or why no answer came. */
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
        {t('pool.actionFailed', { message: test.message })}
      </span>
    );
  }
  const { result } = test;
  const text = result.ok
    ? t('key.testOk', { ms: result.latencyMs })
    : result.status !== null
      ? t('key.testFailed', { status: result.status, message: result.message })
      : t('key.testNoAnswer', { message: result.message });
  return (
    <span className={`key-test ${result.ok ? 'key-test--ok' : 'key-test--bad'}`} role="status" title={result.message} data-testid="key-test-result" data-result={result.ok ? 'ok' : 'bad'}>
      {text}
    </span>
  );
}
