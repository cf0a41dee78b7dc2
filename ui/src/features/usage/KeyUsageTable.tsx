import { useI18n } from '../../i18n/I18nProvider';
import type { Translate } from '../../i18n/problems';
import type { KeyUsage } from '../../ipc/bindings';
import { keyOf } from './usageFigures';
import { formatCost, formatCount, formatLatency } from './usageFormat';
import { TableRegion } from './TableRegion';

/**
 * A key as the ledger names it: its label (or masked preview); the provider's own key; no key at
 * all (a local server such as Ollama, asked without one); a key deleted since.
 */
export function keyLabel(t: Translate, key: Pick<KeyUsage, 'sentWith' | 'label'>): string {
  if (key.label !== null) return key.label;
  switch (key.sentWith) {
    case 'providerKey':
      return t('usagePage.providerKey');
    case 'noKey':
      return t('usagePage.noKey');
    case 'poolKey':
      return t('usagePage.deletedKey');
  }
}

interface Props {
  keys: readonly KeyUsage[];
  providerName: (providerId: string) => string;
  /** The heading the table sits under, which names its scrolling region. */
  titleId: string;
}

/** Every key that sent something in the period, most requests first, with its latencies and cost. */
export function KeyUsageTable({ keys, providerName, titleId }: Props) {
  const { t, intlTag } = useI18n();
  const count = (n: number) => formatCount(n, intlTag);
  const latency = (ms: number | null) => (ms === null ? '—' : formatLatency(ms, intlTag));
  return (
    <TableRegion labelledBy={titleId}>
      <table className="usage-table" data-testid="usage-key-table">
        <caption className="visually-hidden">{t('usagePage.keysTitle')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('usagePage.colProvider')}</th>
            <th scope="col">{t('usagePage.colKey')}</th>
            <th scope="col" className="num">{t('usagePage.requests')}</th>
            <th scope="col" className="num">{t('usagePage.failures')}</th>
            <th scope="col" className="num">{t('usagePage.col429')}</th>
            <th scope="col" className="num">{t('usagePage.colInput')}</th>
            <th scope="col" className="num">{t('usagePage.colCached')}</th>
            <th scope="col" className="num">{t('usagePage.colOutput')}</th>
            <th scope="col" className="num">{t('usagePage.colP50')}</th>
            <th scope="col" className="num">{t('usagePage.colP95')}</th>
            <th scope="col" className="num">{t('usagePage.cost')}</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={keyOf(key)} data-testid="usage-key-row">
              <td className="usage-table__name" title={providerName(key.providerId)}>
                {providerName(key.providerId)}
              </td>
              <th scope="row" className={`usage-table__name${key.label === null ? ' usage-table__key--none' : ''}`} title={keyLabel(t, key)}>
                {keyLabel(t, key)}
              </th>
              <td className="num">{count(key.requests)}</td>
              <td className="num">{count(key.failures)}</td>
              <td className="num">{count(key.rateLimited)}</td>
              <td className="num">{count(key.inputTokens)}</td>
              <td className="num">{count(key.cachedTokens)}</td>
              <td className="num">{count(key.outputTokens)}</td>
              <td className="num">{latency(key.p50LatencyMs)}</td>
              <td className="num">{latency(key.p95LatencyMs)}</td>
              <td className="num">
                {key.cost === null ? (
                  <span className="muted">{t('usagePage.noPrice')}</span>
                ) : (
                  <>
                    {formatCost(key.cost, intlTag)}
                    {!key.costComplete && <span className="usage-table__partly">{t('usagePage.partlyPriced')}</span>}
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}
