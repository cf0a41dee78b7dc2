import { useCallback, useEffect, useId, useMemo, useState } from 'react';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText, fieldError } from '../../i18n/problems';
import { usageApi } from '../../ipc/usage';
import { KeyUsageTable, keyLabel } from './KeyUsageTable';
import { PricesSection } from './PricesSection';
import { SourcesSection } from './SourcesSection';
import { TokensSection } from './TokensSection';
import { TotalsCards } from './TotalsCards';
import type { KeyRef } from './usageFigures';
import { UsageCharts } from './UsageCharts';
import { UsageFilters } from './UsageFilters';
import { DEFAULT_RANGE, openingRange, RANGE_CHOICES, type RangeChoice, rangeOf, type UsageRange } from './usageRange';
import { usePrices, useUsage } from './useUsage';
import './usage.css';
import { useProviders } from '../../hooks/useProviders';

interface Props {
  /** The UI's clock, which decides where the user's days begin; tests pass a fixed one. */
  now?: () => number;
}

/**
 * Usage: what each key spent over a period of the user's days, for every provider or one;
 * totals, three charts (each with its table), the keys one by one, a CSV export, and the prices
 * the costs come from.
 */
export function UsagePage({ now = Date.now }: Props) {
  const { t } = useI18n();
  const choice = useOpeningRange(now);
  if (choice === null) {
    return (
      <section className="usage-page" aria-label={t('usagePage.title')} data-testid="usage-opening">
        <p className="muted usage-page__status" role="status" aria-busy="true" data-testid="usage-loading">
          {t('usagePage.loading')}
        </p>
      </section>
    );
  }
  return <UsageView now={now} opening={choice} />;
}

/**
 * The period to open on: asked of the ledger once (how far back its requests of the longest
 * period go, see {@link openingRange}); the default one when it cannot say. Null while asked.
 */
function useOpeningRange(now: () => number): RangeChoice | null {
  const [choice, setChoice] = useState<RangeChoice | null>(null);
  useEffect(() => {
    let live = true;
    const at = now();
    const { from, to } = rangeOf(RANGE_CHOICES[RANGE_CHOICES.length - 1], at);
    usageApi.getSummary({ from, to }).then(
      (summary) => live && setChoice(openingRange(summary.firstAt, at)),
      () => live && setChoice(DEFAULT_RANGE),
    );
    return () => {
      live = false;
    };
  }, [now]);
  return choice;
}

function UsageView({ now, opening }: { now: () => number; opening: RangeChoice }) {
  const { t } = useI18n();
  const titleId = useId();
  const keysTitleId = useId();
  const [choice, setChoice] = useState<RangeChoice>(opening);
  const [providerId, setProviderId] = useState<string>();
  // Bumped by Refresh, so "today" is measured again (the page may have stayed open past midnight).
  const [asOf, setAsOf] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `asOf` is the reason to read the clock again
  const range = useMemo(() => rangeOf(choice, now()), [choice, now, asOf]);
  const usage = useUsage(range, providerId);
  const prices = usePrices();
  const { providers } = useProviders();

  const providerName = useCallback((id: string) => providers.find((p) => p.id === id)?.name ?? id, [providers]);
  const summaryKeys = usage.state.kind === 'loaded' ? usage.state.data.summary.keys : undefined;
  const keyName = useCallback(
    (key: KeyRef) => {
      const found = summaryKeys?.find((k) => k.providerId === key.providerId && k.keyId === key.keyId);
      const label = keyLabel(t, { sentWith: key.sentWith, label: found?.label ?? null });
      return providerId === undefined ? `${providerName(key.providerId)} · ${label}` : label;
    },
    [summaryKeys, providerId, providerName, t],
  );
  const models = useMemo(() => [...new Set(providers.flatMap((p) => p.models))], [providers]);
  const { reload } = usage;
  const pricesChanged = useCallback(async () => {
    await prices.reload();
    reload();
  }, [prices, reload]);

  const state = usage.state;
  let body: React.ReactNode;
  if (state.kind === 'loading') {
    body = (
      <p className="muted usage-page__status" role="status" aria-busy="true" data-testid="usage-loading">
        {t('usagePage.loading')}
      </p>
    );
  } else if (state.kind === 'failed') {
    body = (
      <div className="form-error usage-page__status" role="alert" data-testid="usage-load-error">
        <p>{t('usagePage.loadFailed', { message: errorText(t, state.error) })}</p>
        <button type="button" className="button" onClick={reload}>
          {t('providers.retry')}
        </button>
      </div>
    );
  } else if (state.data.summary.totals.requests === 0) {
    body = (
      <div className="empty-state usage-page__empty" data-testid="usage-empty">
        <h2>{t('usagePage.emptyTitle')}</h2>
        <p>{t('usagePage.emptyBody')}</p>
      </div>
    );
  } else {
    const { summary } = state.data;
    body = (
      <div className="usage-page__data" aria-busy={state.updating || undefined}>
        <TotalsCards totals={summary.totals} />
        <UsageCharts data={state.data} providerName={providerName} keyName={keyName} />
        <section className="usage-section" aria-labelledby={keysTitleId}>
          <h2 id={keysTitleId}>{t('usagePage.keysTitle')}</h2>
          <KeyUsageTable keys={summary.keys} providerName={providerName} titleId={keysTitleId} />
        </section>
        <SourcesSection range={range} refresh={asOf} />
        <TokensSection range={range} refresh={asOf} />
      </div>
    );
  }

  return (
    <section className="usage-page" aria-labelledby={titleId} data-testid="usage-page">
      <header className="page__header usage-page__header">
        <div>
          <h1 id={titleId}>{t('usagePage.title')}</h1>
          <p className="muted">{t('usagePage.intro')}</p>
        </div>
        <ExportCsv range={range} providerId={providerId} />
      </header>
      <div className="usage-page__body">
        <div className="usage-page__toolbar">
          <UsageFilters range={choice} onRange={setChoice} providers={providers} providerId={providerId} onProvider={setProviderId} />
          <button type="button" className="button" onClick={() => setAsOf((n) => n + 1)} data-testid="usage-refresh">
            <Icon name="refresh" size={16} />
            {t('usagePage.refresh')}
          </button>
        </div>
        {body}
        <PricesSection
          state={prices.state}
          models={models}
          unpriced={state.kind === 'loaded' ? state.data.summary.unpricedModels : []}
          onChanged={pricesChanged}
          onRetry={() => void prices.reload()}
        />
      </div>
    </section>
  );
}

type ExportState = { kind: 'idle' } | { kind: 'saving' } | { kind: 'saved'; path: string; rows: number } | { kind: 'failed'; message: string };

/**
 * Export CSV: the attempts of the period, of the chosen provider or every one (as the page
 * shows them), to a file the user chooses in the system's save dialog. Where it went is
 * announced; a cancelled dialog says nothing.
 */
function ExportCsv({ range, providerId }: { range: UsageRange; providerId: string | undefined }) {
  const { t } = useI18n();
  const [state, setState] = useState<ExportState>({ kind: 'idle' });

  async function run() {
    if (state.kind === 'saving') return;
    setState({ kind: 'saving' });
    try {
      const { path, rows } = await usageApi.exportCsv({ providerId, from: range.from, to: range.to });
      setState(path === null ? { kind: 'idle' } : { kind: 'saved', path, rows });
    } catch (error) {
      // A file that could not be written is reported at `path`: its reason says enough.
      setState({ kind: 'failed', message: fieldError(t, error, 'path') ?? errorText(t, error) });
    }
  }

  return (
    <div className="usage-export">
      <button type="button" className="button" onClick={() => void run()} aria-busy={state.kind === 'saving' || undefined} title={t('usagePage.exportHint')} data-testid="usage-export">
        <Icon name="download" size={16} />
        {t('usagePage.export')}
      </button>
      <p className="usage-export__status" role="status" data-testid="usage-export-status">
        {state.kind === 'saved' ? t('usagePage.exported', { count: state.rows, path: state.path }) : ''}
      </p>
      {state.kind === 'failed' && (
        <p className="form-error" role="alert" data-testid="usage-export-error">
          {t('usagePage.exportFailed', { message: state.message })}
        </p>
      )}
    </div>
  );
}
