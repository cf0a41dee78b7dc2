import { useId, useState } from 'react';
import { CopyButton } from '../../../components/CopyButton';
import { Switch } from '../../../components/Switch';
import { useProviders } from '../../../hooks/useProviders';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, type Translate } from '../../../i18n/problems';
import type { ClientApi, LocalApiProblem, LocalApiStatus } from '../../../ipc/bindings';
import type { MessageKey } from '../../../i18n';
import { AgentsPanel } from './AgentsPanel';
import { NamedTokens } from './NamedTokens';
import { PortField } from './PortField';
import { RoutesSection } from './RoutesSection';
import { SnippetTabs } from './SnippetTabs';
import { type ExampleRoute, exampleModel, exampleRoute, providerNamed, sharedModels, snippets } from './snippets';
import { TokenDialog, type TokenDialogMode } from './TokenDialog';
import { useKeylessReachability } from './useKeylessReachability';
import { useLocalApi } from './useLocalApi';

/** The dialects the examples speak, in the order their tabs show them, and their names. */
const EXAMPLE_APIS: readonly ClientApi[] = ['openai', 'anthropic', 'gemini'];
const API_NAMES: Record<ClientApi, MessageKey> = { openai: 'localApi.apiOpenai', anthropic: 'localApi.apiAnthropic', gemini: 'localApi.apiGemini' };

/** How each example's provider is named: by its keys, or as a keyless server that answers or not. */
const EXAMPLE_WORDS: Record<ExampleRoute, MessageKey> = {
  keys: 'localApi.exampleModel',
  keyless: 'localApi.exampleModelKeyless',
  unreachable: 'localApi.exampleModelUnreachable',
};

/**
 * Why the endpoint could not listen where it was asked to, in words: it is not running, or, when
 * `serving` is given, it could not move there and goes on serving on that port.
 */
export function startProblemText(t: Translate, problem: LocalApiProblem, serving?: number): string {
  switch (problem.kind) {
    case 'portInUse':
      return serving === undefined ? t('localApi.portInUse', { port: problem.port }) : t('localApi.portInUseKept', { port: problem.port, serving });
    case 'bind':
      return serving === undefined
        ? t('localApi.bindFailed', { port: problem.port, reason: problem.reason })
        : t('localApi.bindFailedKept', { port: problem.port, reason: problem.reason, serving });
    default:
      return t('error.unexpected');
  }
}

/** Where the endpoint is, or would be: the real address while it runs. */
function addressOf(status: LocalApiStatus): string {
  return status.address ?? `http://127.0.0.1:${status.port}`;
}

/**
 * Settings → Local API: the switch, the port, whether the endpoint is up and where, its live
 * counts, the token (shown once, regenerable), named tokens (one per agent or script), the routes, the coding agents panel and
 * copy-ready examples for the official SDKs.
 */
export function LocalApiSection() {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const api = useLocalApi();
  const { providers } = useProviders();
  const reachable = useKeylessReachability(providers);
  const [dialog, setDialog] = useState<TokenDialogMode | null>(null);
  const [switching, setSwitching] = useState<boolean | null>(null);
  const [problem, setProblem] = useState<string>();
  /** Moves on every saved route change: the agents' resolutions follow the routes. */
  const [routesVersion, setRoutesVersion] = useState(0);

  async function configure(enabled: boolean, port?: number) {
    const token = await api.configure(enabled, port);
    if (token) setDialog({ kind: 'shown', token });
  }

  async function toggle(enabled: boolean) {
    if (switching !== null) return;
    setSwitching(enabled);
    setProblem(undefined);
    try {
      await configure(enabled);
    } catch (e) {
      setProblem(t('localApi.actionFailed', { message: errorText(t, e) }));
    } finally {
      setSwitching(null);
    }
  }

  let body: React.ReactNode;
  if (api.state.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('localApi.loading')}
      </p>
    );
  } else if (api.state.kind === 'failed') {
    body = (
      <div className="form-error" role="alert" data-testid="local-api-load-error">
        <p>{t('localApi.loadFailed', { message: errorText(t, api.state.error) })}</p>
        <button type="button" className="button" onClick={api.retry}>
          {t('providers.retry')}
        </button>
      </div>
    );
  } else {
    const status = api.state.status;
    const running = status.enabled && status.running;
    const state = running ? 'running' : status.enabled ? 'stopped' : 'off';
    // Running with an error: a move to another port failed and it serves where it was.
    const startProblem = status.error ? startProblemText(t, status.error, running ? status.port : undefined) : undefined;
    const address = addressOf(status);
    // The examples ask for a model the pool can answer now, or say why there is none yet.
    // A provider with keys first: a keyless server (Ollama) only when it answered just now, or
    // when nothing else can answer (and then the page says it did not).
    const chosen = EXAMPLE_APIS.map((api) => {
      const served = exampleModel(status.served, api, providers, reachable);
      const provider = served ? providerNamed(providers, served.provider) : undefined;
      return { api, served, provider, route: exampleRoute(provider, reachable) };
    });
    const modelFor = (api: ClientApi) => chosen.find((c) => c.api === api)?.served?.model ?? t('localApi.modelPlaceholder');
    // A bare name two providers list goes to the first: said, with how to ask for another.
    const shared = sharedModels(status.served);
    const examples = snippets({
      address,
      token: t('localApi.tokenPlaceholder'),
      openaiModel: modelFor('openai'),
      anthropicModel: modelFor('anthropic'),
      geminiModel: modelFor('gemini'),
    });
    body = (
      <>
        <div className="local-api__card">
          <div className="local-api__switch-row">
            <Switch checked={switching ?? status.enabled} onChange={(on) => void toggle(on)} label={t('localApi.enable')} busy={switching !== null} testId="local-api-switch" />
            <span className="local-api__switch-label" aria-hidden="true">
              {t('localApi.enable')}
            </span>
            <span
              className={`badge ${running ? 'badge--active' : status.enabled ? 'badge--error' : 'badge--off'}`}
              role="status"
              data-testid="local-api-state"
              data-state={state}
            >
              {t(running ? 'localApi.stateRunning' : status.enabled ? 'localApi.stateStopped' : 'localApi.stateOff')}
            </span>
          </div>
          {problem && (
            <p className="form-error" role="alert" data-testid="local-api-problem">
              {problem}
            </p>
          )}
          <PortField port={status.port} onSave={(port) => configure(status.enabled, port)} startProblem={startProblem} />
          <dl className="local-api__facts">
            {running && status.address && (
              <>
                <dt>{t('localApi.address')}</dt>
                <dd className="local-api__address">
                  <code data-testid="local-api-address">{status.address}</code>
                  <CopyButton text={() => status.address ?? ''} label={t('localApi.copyAddress')} testId="local-api-address-copy" />
                </dd>
              </>
            )}
            <dt>{t('localApi.requests')}</dt>
            <dd data-testid="local-api-requests">{status.requests.toLocaleString(intlTag)}</dd>
            <dt>{t('localApi.inFlight')}</dt>
            <dd data-testid="local-api-in-flight">{status.inFlight.toLocaleString(intlTag)}</dd>
            <dt>{t('localApi.failed')}</dt>
            <dd data-testid="local-api-failed">{status.failed.toLocaleString(intlTag)}</dd>
          </dl>
          <p className="field__hint">{t('localApi.countsHint')}</p>
          {status.enabled && (
            <div className="local-api__token">
              <h3>{t('localApi.token')}</h3>
              <p className="field__hint">{t('localApi.tokenHint')}</p>
              <button type="button" className="button" onClick={() => setDialog({ kind: 'ask' })} data-testid="local-api-regenerate">
                {t('localApi.regenerate')}
              </button>
            </div>
          )}
          {status.enabled && <NamedTokens />}
        </div>
        <RoutesSection providers={providers} onSaved={() => setRoutesVersion((v) => v + 1)} version={routesVersion} />
        <AgentsPanel
          enabled={status.enabled}
          served={status.served}
          version={`${routesVersion}:${status.port}`}
          providers={providers}
          onRouteMade={() => setRoutesVersion((v) => v + 1)}
        />
        <section className="local-api__usage" aria-labelledby={`${titleId}-usage`}>
          <h3 id={`${titleId}-usage`}>{t('localApi.usage')}</h3>
          <p className="field__hint">{t('localApi.usageHint')}</p>
          {!running && <p className="field__hint">{t('localApi.notRunningHint')}</p>}
          <div className="field__hint" data-testid="local-api-example-models">
            <p>{t('localApi.exampleModelsIntro')}</p>
            <ul>
              {chosen.map(({ api, served, provider, route }) => (
                <li key={api} data-testid="local-api-example-model" data-api={api} data-route={served ? route : undefined}>
                  {served
                    ? t(EXAMPLE_WORDS[route], { api: t(API_NAMES[api]), model: served.model, provider: served.provider, address: provider?.baseUrl ?? '' })
                    : t('localApi.noModelNoKey', { api: t(API_NAMES[api]) })}
                </li>
              ))}
            </ul>
          </div>
          {shared.length > 0 && (
            <div className="field__hint" data-testid="local-api-shared-models">
              <p>{t('localApi.sharedIntro')}</p>
              <ul>
                {shared.map((m) => (
                  <li key={`${m.api} ${m.model}`} data-testid="local-api-shared-model">
                    {t('localApi.sharedModel', { model: m.model, provider: m.provider, others: m.others.join(t('list.separator')), example: `${m.others[0]}/${m.model}` })}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <SnippetTabs items={examples} />
        </section>
      </>
    );
  }

  return (
    <section className="local-api" aria-labelledby={titleId} data-testid="local-api-section">
      <header className="section-header">
        <h2 id={titleId}>{t('settings.localApi')}</h2>
        <p className="muted">{t('localApi.intro')}</p>
      </header>
      {body}
      {dialog && <TokenDialog key={dialog.kind === 'shown' ? dialog.token : 'ask'} mode={dialog} onRegenerate={api.regenerateToken} onClose={() => setDialog(null)} />}
    </section>
  );
}

