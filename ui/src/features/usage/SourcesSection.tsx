import { useId } from 'react';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText, type Translate } from '../../i18n/problems';
import type { SourceUsage, UsageSource } from '../../ipc/bindings';
import { usageApi } from '../../ipc/usage';
import { AGENT_NAMES } from '../settings/local-api/agents';
import { TableRegion } from './TableRegion';
import { formatCost, formatCount, formatShare } from './usageFormat';
import type { UsageRange } from './usageRange';
import { useRangeReport } from './useRangeReport';
import './sources.css';

/** Who asked, in words: an agent by its product name, the chat, or other clients. */
export function sourceName(t: Translate, source: UsageSource): string {
  switch (source.kind) {
    case 'agent':
      return AGENT_NAMES[source.agent];
    case 'chat':
      return t('usagePage.sourceChat');
    case 'other':
      return t('usagePage.sourceOther');
  }
}

interface Props {
  range: Pick<UsageRange, 'from' | 'to'>;
  /** Changes when the page is refreshed. */
  refresh: unknown;
}

/**
 * Usage by source: each coding agent, the chat and other clients, with its failures, its share of
 * input tokens the prompt cache served and its cost where its models have prices (as By token); a warning for an agent whose share dropped sharply in the last
 * day against the week before (a session off its key, or a prompt that changes at its start).
 * Every provider's, whatever the page's filter: the sources are the clients, not the pools.
 */
export function SourcesSection({ range, refresh }: Props) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const load = useRangeReport(usageApi.getBySource, range, refresh);

  let body: React.ReactNode;
  if (load.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('usagePage.loading')}
      </p>
    );
  } else if (load.kind === 'failed') {
    body = (
      <p className="form-error" role="alert">
        {t('usagePage.sourcesFailed', { message: errorText(t, load.error) })}
      </p>
    );
  } else {
    const { sources, drops } = load.report;
    const count = (n: number) => formatCount(n, intlTag);
    const cost = (row: SourceUsage) => {
      if (row.cost === null) return '—';
      const text = formatCost(row.cost, intlTag);
      return row.costComplete ? text : t('usagePage.costPartial', { cost: text });
    };
    body = (
      <>
        {drops.length > 0 && (
          <ul className="usage-sources__drops" data-testid="usage-cache-drops">
            {drops.map((drop) => (
              <li key={drop.agent} data-agent={drop.agent}>
                {t('usagePage.cacheDrop', { agent: AGENT_NAMES[drop.agent], lastDay: formatShare(drop.lastDay, intlTag), weekBefore: formatShare(drop.weekBefore, intlTag) })}
              </li>
            ))}
          </ul>
        )}
        <TableRegion labelledBy={titleId}>
          <table className="usage-table" data-testid="usage-source-table">
            <caption className="visually-hidden">{t('usagePage.sourcesTitle')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('usagePage.colSource')}</th>
                <th scope="col" className="num">
                  {t('usagePage.requests')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.failures')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.colInput')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.colCachedShare')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.colOutput')}
                </th>
                <th scope="col" className="num">
                  {t('usagePage.cost')}
                </th>
              </tr>
            </thead>
            <tbody>
              {sources.map((row) => {
                const name = sourceName(t, row.source);
                return (
                  <tr key={row.source.kind === 'agent' ? row.source.agent : row.source.kind} data-testid="usage-source-row" data-source={row.source.kind === 'agent' ? row.source.agent : row.source.kind}>
                    <th scope="row" className="usage-table__name">
                      {name}
                    </th>
                    <td className="num">{count(row.requests)}</td>
                    <td className="num" data-testid="usage-source-failures">
                      {count(row.failures)}
                    </td>
                    <td className="num">{count(row.inputTokens)}</td>
                    <td className="num">{row.cachedShare === null ? '—' : formatShare(row.cachedShare, intlTag)}</td>
                    <td className="num">{count(row.outputTokens)}</td>
                    <td className="num" data-testid="usage-source-cost">
                      {cost(row)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableRegion>
      </>
    );
  }

  return (
    <section className="usage-section" aria-labelledby={titleId} data-testid="usage-sources">
      <h2 id={titleId}>{t('usagePage.sourcesTitle')}</h2>
      <p className="field__hint">{t('usagePage.sourcesHint')}</p>
      {body}
    </section>
  );
}
