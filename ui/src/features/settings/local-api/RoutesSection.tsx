import { useEffect, useId, useRef, useState } from 'react';
import { useI18n } from '../../../i18n/I18nProvider';
import { errorText, replyErrorText } from '../../../i18n/problems';
import type { Provider, Route, RouteInput, RouteState, RouteTest } from '../../../ipc/bindings';
import { LIMITS } from '../../../ipc/bindings';
import type { MessageKey } from '../../../i18n';
import { RouteDialog } from './RouteDialog';
import { inputOf, movedRoute, withoutRoute, withRoute } from './routes';
import { useRoutes } from './useRoutes';
import './agents.css';

interface Props {
  providers: readonly Provider[];
  /** Told after every saved change (the agents' resolutions follow the routes). */
  onSaved?: () => void;
  /** Changes when the routes were saved elsewhere (Connect's one-click route): read them again. */
  version?: unknown;
}

/** A route that cannot answer now, in words (a ready one says nothing). */
const STATE_WORDS: Record<Exclude<RouteState, 'ready'>, MessageKey> = {
  noUsableKey: 'routes.noUsableKey',
  unknownProvider: 'routes.unknownProvider',
};

type Editing = { index: number; route: RouteInput | null };
type Tried = { index: number; route: RouteInput } & ({ kind: 'trying' } | { kind: 'done'; test: RouteTest } | { kind: 'failed'; error: unknown });

/** The buttons of a row that keep the focus when the list changes under them. */
type RowAction = 'try' | 'edit' | 'up' | 'down' | 'delete';

/**
 * Settings → Local API → Routes: a glob over the model a client asks for to a provider's model,
 * the first match winning. Add, edit (a dialog), move up and down, delete, and try (a tiny request
 * through the pool, its answer or why none came shown under the route). Each change saves the
 * whole list at once; the running endpoint applies it at once.
 */
export function RoutesSection({ providers, onSaved, version }: Props) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const api = useRoutes();
  const [editing, setEditing] = useState<Editing | null>(null);
  const [tried, setTried] = useState<Tried | null>(null);
  const [problem, setProblem] = useState<string>();
  const [announcement, setAnnouncement] = useState('');
  const buttons = useRef(new Map<string, HTMLButtonElement>());
  const retry = api.retry;
  const seenVersion = useRef(version);
  useEffect(() => {
    if (seenVersion.current === version) return;
    seenVersion.current = version;
    retry();
  }, [version, retry]);
  const addButton = useRef<HTMLButtonElement>(null);
  const focusAfter = (index: number, action: RowAction) =>
    setTimeout(() => (buttons.current.get(`${index}:${action}`) ?? addButton.current)?.focus(), 0);

  async function save(routes: RouteInput[], said: string, focus?: [number, RowAction]) {
    setProblem(undefined);
    try {
      await api.save(routes);
      setAnnouncement(said);
      onSaved?.();
      if (focus) focusAfter(...focus);
    } catch (e) {
      setProblem(t('routes.saveFailed', { message: errorText(t, e) }));
      throw e;
    }
  }

  async function tryRoute(index: number, route: RouteInput) {
    setTried({ index, route, kind: 'trying' });
    try {
      const test = await api.test(route);
      setTried((now) => (now?.index === index ? { index, route, kind: 'done', test } : now));
    } catch (error) {
      setTried((now) => (now?.index === index ? { index, route, kind: 'failed', error } : now));
    }
  }

  function triedText(attempt: Tried): string {
    if (attempt.kind === 'trying') return t('routes.trying', { model: attempt.route.toModel });
    if (attempt.kind === 'failed') return t('routes.tryFailed', { message: errorText(t, attempt.error) });
    const { provider, model, outcome } = attempt.test;
    if (outcome.kind === 'answered') {
      const reply = outcome.reply.trim() || t('routes.emptyReply');
      return outcome.keyLabel
        ? t('routes.answeredWithKey', { provider, model, reply, ms: outcome.latencyMs.toLocaleString(intlTag), key: outcome.keyLabel })
        : t('routes.answered', { provider, model, reply, ms: outcome.latencyMs.toLocaleString(intlTag) });
    }
    return t('routes.notAnswered', { provider, model, reason: replyErrorText(t, outcome.error, { now: Date.now(), intlTag }) });
  }

  const bind = (index: number, action: RowAction) => (node: HTMLButtonElement | null) => {
    if (node) buttons.current.set(`${index}:${action}`, node);
    else buttons.current.delete(`${index}:${action}`);
  };

  let body: React.ReactNode;
  if (api.state.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('localApi.loading')}
      </p>
    );
  } else if (api.state.kind === 'failed') {
    body = (
      <div className="form-error" role="alert">
        <p>{t('routes.loadFailed', { message: errorText(t, api.state.error) })}</p>
        <button type="button" className="button" onClick={api.retry}>
          {t('providers.retry')}
        </button>
      </div>
    );
  } else {
    const routes: Route[] = api.state.status;
    const full = routes.length >= LIMITS.routes.maxItems;
    // A row's key is what it says (the same route twice: counted), so a move keeps its element.
    const seen = new Map<string, number>();
    const keyOf = (route: Route) => {
      const base = `${route.model}\u0000${route.provider}\u0000${route.toModel}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return `${base}\u0000${n}`;
    };
    body = (
      <>
        {routes.length === 0 ? (
          <p className="muted" data-testid="routes-empty">
            {t('routes.empty')}
          </p>
        ) : (
          <ol className="routes__list" aria-labelledby={titleId} data-testid="routes-list">
            {routes.map((route, index) => {
              const name = route.model;
              const attempt = tried?.index === index && tried.route.model === route.model && tried.route.toModel === route.toModel ? tried : null;
              return (
                <li key={keyOf(route)} className="routes__row" data-testid="route-row" data-state={route.state}>
                  <div className="routes__rule">
                    <span className="routes__position">{(index + 1).toLocaleString(intlTag)}.</span>
                    <code data-testid="route-pattern">{route.model}</code>
                    <span aria-hidden="true">→</span>
                    <span className="visually-hidden">{t('routes.goesTo')}</span>
                    <span data-testid="route-target">
                      {route.providerName ?? t('routes.deletedProvider')} / <code>{route.toModel}</code>
                    </span>
                    {route.state !== 'ready' && (
                      <span className={`badge ${route.state === 'noUsableKey' ? 'badge--cooling' : 'badge--error'}`} data-testid="route-state">
                        {t(STATE_WORDS[route.state])}
                      </span>
                    )}
                  </div>
                  <div className="routes__actions">
                    <button ref={bind(index, 'try')} type="button" className="button button--small" onClick={() => void tryRoute(index, inputOf(route))} aria-label={t('routes.tryLabel', { name })} aria-busy={attempt?.kind === 'trying' || undefined} data-testid="route-try">
                      {t('routes.try')}
                    </button>
                    <button ref={bind(index, 'edit')} type="button" className="button button--small" onClick={() => setEditing({ index, route: inputOf(route) })} aria-label={t('routes.editLabel', { name })} data-testid="route-edit">
                      {t('routes.edit')}
                    </button>
                    <button
                      ref={bind(index, 'up')}
                      type="button"
                      className="button button--small button--quiet"
                      disabled={index === 0}
                      onClick={() => {
                        const list = movedRoute(routes, index, -1);
                        if (list) void save(list, t('routes.movedUp', { name, position: index }), [index - 1, index - 1 === 0 ? 'down' : 'up']).catch(() => {});
                      }}
                      aria-label={t('routes.upLabel', { name })}
                      data-testid="route-up"
                    >
                      ↑
                    </button>
                    <button
                      ref={bind(index, 'down')}
                      type="button"
                      className="button button--small button--quiet"
                      disabled={index === routes.length - 1}
                      onClick={() => {
                        const list = movedRoute(routes, index, 1);
                        if (list) void save(list, t('routes.movedDown', { name, position: index + 2 }), [index + 1, index + 1 === routes.length - 1 ? 'up' : 'down']).catch(() => {});
                      }}
                      aria-label={t('routes.downLabel', { name })}
                      data-testid="route-down"
                    >
                      ↓
                    </button>
                    <button
                      ref={bind(index, 'delete')}
                      type="button"
                      className="button button--small button--quiet-danger"
                      onClick={() => void save(withoutRoute(routes, index), t('routes.deleted', { name }), [Math.min(index, routes.length - 2), 'delete']).catch(() => {})}
                      aria-label={t('routes.deleteLabel', { name })}
                      data-testid="route-delete"
                    >
                      {t('routes.delete')}
                    </button>
                  </div>
                  {attempt && (
                    <p className={`routes__tried${attempt.kind === 'done' && attempt.test.outcome.kind === 'answered' ? '' : attempt.kind === 'trying' ? ' muted' : ' routes__tried--failed'}`} role="status" data-testid="route-tried" data-outcome={attempt.kind === 'done' ? attempt.test.outcome.kind : attempt.kind}>
                      {triedText(attempt)}
                    </p>
                  )}
                </li>
              );
            })}
          </ol>
        )}
        {problem && (
          <p className="form-error" role="alert" data-testid="routes-problem">
            {problem}
          </p>
        )}
        <div>
          <button ref={addButton} type="button" className="button" disabled={full || providers.length === 0} onClick={() => setEditing({ index: routes.length, route: null })} data-testid="route-add">
            {t('routes.addButton')}
          </button>
          {full && <p className="field__hint">{t('routes.full', { max: LIMITS.routes.maxItems })}</p>}
        </div>
        {editing && (
          <RouteDialog
            route={editing.route}
            index={editing.index}
            providers={providers}
            onSave={(route) => save(withRoute(routes, editing.index, route), t(editing.route ? 'routes.saved' : 'routes.added', { name: route.model }))}
            onClose={() => setEditing(null)}
          />
        )}
      </>
    );
  }

  return (
    <section className="routes" aria-labelledby={titleId} data-testid="routes-section">
      <h3 id={titleId}>{t('routes.title')}</h3>
      <p className="field__hint">{t('routes.hint')}</p>
      {body}
      <p className="visually-hidden" role="status" aria-live="polite" data-testid="routes-announcement">
        {announcement}
      </p>
    </section>
  );
}
