import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { ConfirmDeleteDialog } from '../../../components/ConfirmDeleteDialog';
import { Field } from '../../../components/Field';
import { useI18n } from '../../../i18n/I18nProvider';
import { formatRelative } from '../../../i18n/format';
import { errorText } from '../../../i18n/problems';
import { LIMITS, type NamedToken } from '../../../ipc/bindings';
import { localApiApi } from '../../../ipc/localApi';
import { placeBackendError } from '../../../forms/placeBackendError';
import type { Agent } from '../../../ipc/bindings';
import { formatCount } from '../../../i18n/format';
import { AGENT_NAMES } from './agents';
import { TokenDialog } from './TokenDialog';
import { TokenRulesDialog } from './TokenRulesDialog';
import { rulesSummary, usd } from './tokenRules';

/** The agent Connect made a token for, by the slug the backend names it with. */
const AGENT_OF_SLUG: Record<string, Agent> = { 'claude-code': 'claudeCode', codex: 'codex', 'gemini-cli': 'geminiCli' };

type Load = { kind: 'loading' } | { kind: 'failed'; error: unknown } | { kind: 'loaded'; tokens: NamedToken[] };

/**
 * Named tokens of the local API: one per agent (Connect makes those), script or person, each
 * shown once when made, each with limits of its own (a budget, rates, requests at once, models,
 * an expiry), each revoked alone (after a question), each request of one counted under its name
 * on the Usage page. The list never holds a token: names, the agent, when each was last used,
 * what it spent this month and what it may do.
 */
export function NamedTokens() {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const [load, setLoad] = useState<Load>({ kind: 'loading' });
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string>();
  const [formError, setFormError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<{ name: string; token: string } | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  const [editing, setEditing] = useState<NamedToken | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);

  const read = useCallback(() => {
    localApiApi.listTokens().then(
      (tokens) => setLoad({ kind: 'loaded', tokens }),
      (error) => setLoad((l) => (l.kind === 'loaded' ? l : { kind: 'failed', error })),
    );
  }, []);
  useEffect(read, [read]);

  async function create(event: React.FormEvent) {
    event.preventDefault();
    if (busy) return;
    const wanted = name.trim();
    if (!wanted) {
      setNameError(t('issue.blank'));
      input.current?.focus();
      return;
    }
    setBusy(true);
    setNameError(undefined);
    setFormError(undefined);
    try {
      const created = await localApiApi.createToken(wanted);
      setName('');
      setMade({ name: created.name, token: created.token });
      read();
    } catch (e) {
      const placed = placeBackendError(t, e, ['name'] as const);
      setNameError(placed.fields.name);
      setFormError(placed.form === undefined ? undefined : t('namedTokens.createFailed', { message: placed.form }));
      input.current?.focus();
    } finally {
      setBusy(false);
    }
  }

  let body: React.ReactNode;
  if (load.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('localApi.loading')}
      </p>
    );
  } else if (load.kind === 'failed') {
    body = (
      <p className="form-error" role="alert">
        {t('namedTokens.loadFailed', { message: errorText(t, load.error) })}
      </p>
    );
  } else if (load.tokens.length === 0) {
    body = (
      <p className="field__hint" data-testid="named-tokens-empty">
        {t('namedTokens.none')}
      </p>
    );
  } else {
    const now = Date.now();
    body = (
      <ul className="named-tokens__list" ref={list} aria-labelledby={titleId} data-testid="named-tokens-list">
        {load.tokens.map((token) => (
          <li key={token.name} className="named-tokens__row" data-testid="named-token" data-name={token.name}>
            <div className="named-tokens__what">
              <span className="named-tokens__name">{token.name}</span>
              {token.agent && AGENT_OF_SLUG[token.agent] && (
                <span className="muted" data-testid="named-token-agent">
                  {' · '}
                  {t('namedTokens.agentToken', { name: AGENT_NAMES[AGENT_OF_SLUG[token.agent]] })}
                </span>
              )}
              <span className="named-tokens__used muted" data-testid="named-token-last-used">
                {token.lastUsedAt === null ? t('namedTokens.neverUsed') : t('namedTokens.lastUsed', { when: formatRelative(token.lastUsedAt, now, intlTag) })}
                {!token.usable && ` · ${t('namedTokens.notServed')}`}
                {' · '}
                {t('namedTokens.spentMonth', { tokens: formatCount(token.spent.monthTokens, intlTag), usd: usd(token.spent.monthUsd, intlTag) })}
              </span>
              <span className="named-tokens__rules muted" data-testid="named-token-rules">
                {rulesSummary(t, token.rules, intlTag)}
              </span>
            </div>
            <button
              type="button"
              className="button button--small"
              onClick={() => setEditing(token)}
              aria-label={t('namedTokens.limitsNamed', { name: token.name })}
              data-testid="named-token-limits"
            >
              {t('namedTokens.limits')}
            </button>
            <button
              type="button"
              className="button button--small"
              onClick={() => setRevoking(token.name)}
              aria-label={t('namedTokens.revokeNamed', { name: token.name })}
              data-testid="named-token-revoke"
            >
              {t('namedTokens.revoke')}
            </button>
          </li>
        ))}
      </ul>
    );
  }

  return (
    <section className="named-tokens" aria-labelledby={titleId} data-testid="named-tokens">
      <h3 id={titleId}>{t('namedTokens.title')}</h3>
      <p className="field__hint">{t('namedTokens.hint')}</p>
      {body}
      <form className="named-tokens__form" onSubmit={(e) => void create(e)} noValidate>
        <Field label={t('namedTokens.name')} hint={t('namedTokens.nameHint')} error={nameError} testId="named-token-name">
          {({ id, describedBy, invalid }) => (
            <input
              ref={input}
              id={id}
              className="input"
              value={name}
              maxLength={LIMITS.tokenName.maxChars}
              autoComplete="off"
              spellCheck={false}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onChange={(e) => setName(e.target.value)}
              data-testid="named-token-name-input"
            />
          )}
        </Field>
        {formError && (
          <p className="form-error" role="alert">
            {formError}
          </p>
        )}
        <button type="submit" className="button" aria-busy={busy || undefined} data-testid="named-token-create">
          {t('namedTokens.create')}
        </button>
      </form>
      {editing && (
        <TokenRulesDialog
          token={editing}
          onSave={async (rules) => {
            const tokens = await localApiApi.updateToken(editing.name, rules);
            setLoad({ kind: 'loaded', tokens });
          }}
          onClose={() => setEditing(null)}
        />
      )}
      {made && <TokenDialog mode={{ kind: 'shown', token: made.token }} title={t('namedTokens.madeTitle', { name: made.name })} onClose={() => setMade(null)} />}
      {revoking && (
        <ConfirmDeleteDialog
          title={t('namedTokens.revokeTitle', { name: revoking })}
          body={t('namedTokens.revokeBody', { name: revoking })}
          confirmLabel={t('namedTokens.revoke')}
          failure={(message) => t('namedTokens.revokeFailed', { message })}
          testId="named-token-revoke"
          onConfirm={async () => {
            const tokens = await localApiApi.revokeToken(revoking);
            setLoad({ kind: 'loaded', tokens });
          }}
          onClose={() => setRevoking(null)}
          returnFocus={() => list.current?.querySelector<HTMLElement>('[data-testid="named-token-revoke"]') ?? input.current}
        />
      )}
    </section>
  );
}
