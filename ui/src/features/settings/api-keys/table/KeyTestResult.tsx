import { useI18n } from '../../../../i18n/I18nProvider';
import { errorText, probeText, type Translate } from '../../../../i18n/problems';
import type { Credit } from '../../../../ipc/bindings';
import { formatCost } from '../../../usage/usageFormat';
import type { KeyTest } from '../useKeyTests';

/** What a key may still spend, where its provider says (OpenRouter): `$74.50 of $100.00 credit left`. */
export function creditText(t: Translate, credit: Credit, intlTag: string): string {
  const cost = (usd: number) => formatCost(usd, intlTag);
  if (credit.limit !== null && credit.remaining !== null) {
    return t('key.creditLeft', { left: cost(Math.max(credit.remaining, 0)), limit: cost(credit.limit) });
  }
  return t('key.creditSpent', { spent: cost(credit.usage) });
}

/** `OK · 123 ms`, or what went wrong, worded from the problem (the provider's words quoted). */
export function KeyTestResultLine({ test }: { test: KeyTest }) {
  const { t, intlTag } = useI18n();
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
  const said = result.ok
    ? t('key.testOk', { ms: result.latencyMs })
    : result.problem
      ? probeText(t, result.problem, result.status, result.message)
      : result.status !== null
        ? t('key.testFailedStatus', { status: result.status })
        : t('error.provider');
  const text = result.credit ? `${said} · ${creditText(t, result.credit, intlTag)}` : said;
  return (
    <span className={`key-test ${result.ok ? 'key-test--ok' : 'key-test--bad'}`} role="status" data-testid="key-test-result" data-result={result.ok ? 'ok' : 'bad'}>
      {text}
    </span>
  );
}
