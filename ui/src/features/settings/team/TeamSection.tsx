import { useEffect, useId, useRef, useState } from 'react';
import { CopyButton } from '../../../components/CopyButton';
import { Field } from '../../../components/Field';
import { useFieldForm } from '../../../forms/useFieldForm';
import { useI18n } from '../../../i18n/I18nProvider';
import type { MessageKey } from '../../../i18n';
import { errorText, type Translate } from '../../../i18n/problems';
import type { TeamReason, TeamStatus } from '../../../ipc/bindings';
import { parseTeamForm, TEAM_FIELDS, type TeamField, type TeamJoin } from './teamForm';
import { useKeychainKept } from './useKeychainKept';
import { useTeam } from './useTeam';

const REASONS: Record<TeamReason, MessageKey> = {
  unreachable: 'team.reasonUnreachable',
  lost: 'team.reasonLost',
  secretMissing: 'team.reasonSecretMissing',
};

/**
 * The status in words: the state, and why when disconnected. `noKeychain`: the machine has no
 * keychain, so a secret missing at start was never kept, not lost from it.
 */
export function teamStateText(t: Translate, status: TeamStatus, noKeychain = false): string {
  switch (status.state) {
    case 'connected':
      return t('team.stateConnected');
    case 'connecting':
      return t('team.stateConnecting');
    case 'disconnected':
      if (status.reason === 'secretMissing' && noKeychain) return t('team.stateDisconnectedBecause', { reason: t('team.reasonSecretForgotten') });
      return status.reason ? t('team.stateDisconnectedBecause', { reason: t(REASONS[status.reason]) }) : t('team.stateDisconnected');
    default:
      return t('team.stateOff');
  }
}

const BADGES: Record<TeamStatus['state'], string> = {
  connected: 'badge--active',
  connecting: 'badge--cooling',
  disconnected: 'badge--error',
  off: 'badge--off',
};

/**
 * Settings → Team: the team's Redis URL, its name and the team secret (generated here and shown
 * once to copy to the other members, or pasted from another member; masked, and kept in the
 * keychain once connected), Connect / Disconnect, and the status: connected or why not, the
 * members seen in the last minute, the last change received.
 */
export function TeamSection() {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const team = useTeam();
  const noKeychain = useKeychainKept() === false;
  const [generated, setGenerated] = useState<string>();
  const [problem, setProblem] = useState<string>();
  const [leaving, setLeaving] = useState(false);
  const inputs = { redisUrl: useRef<HTMLInputElement>(null), team: useRef<HTMLInputElement>(null), secret: useRef<HTMLInputElement>(null) };
  const shown = team.state.kind === 'loaded' ? team.state.status : null;
  const form = useFieldForm<TeamField, TeamJoin>({
    fields: TEAM_FIELDS,
    initial: () => ({ redisUrl: '', team: '', secret: '' }),
    inputs,
    parse: parseTeamForm,
    save: async (join) => {
      setProblem(undefined);
      await team.connect(join);
      form.update('secret', '');
      setGenerated(undefined);
    },
  });
  // The kept URL and name fill the form once they are known (never the secret: it is not sent).
  const filled = useRef(false);
  const { update } = form;
  useEffect(() => {
    if (filled.current || !shown) return;
    filled.current = true;
    if (shown.redisUrl) update('redisUrl', shown.redisUrl);
    if (shown.team) update('team', shown.team);
  }, [shown, update]);

  async function generate() {
    setProblem(undefined);
    try {
      const secret = await team.generateSecret();
      setGenerated(secret);
      form.update('secret', secret);
    } catch (e) {
      setProblem(t('team.actionFailed', { message: errorText(t, e) }));
    }
  }

  async function disconnect() {
    if (leaving) return;
    setLeaving(true);
    setProblem(undefined);
    try {
      await team.disconnect();
    } catch (e) {
      setProblem(t('team.actionFailed', { message: errorText(t, e) }));
    } finally {
      setLeaving(false);
    }
  }

  let body: React.ReactNode;
  if (team.state.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('team.loading')}
      </p>
    );
  } else if (team.state.kind === 'failed') {
    body = (
      <div className="form-error" role="alert" data-testid="team-load-error">
        <p>{t('team.loadFailed', { message: errorText(t, team.state.error) })}</p>
        <button type="button" className="button" onClick={team.retry}>
          {t('providers.retry')}
        </button>
      </div>
    );
  } else {
    const status = team.state.status;
    const on = status.state !== 'off';
    const secretHint =
      status.secret === 'keychain'
        ? t('team.secretKeptHint')
        : status.secret === 'memory'
          ? t('team.secretMemoryHint')
          : noKeychain
            ? t('team.secretHintNoKeychain')
            : t('team.secretHint');
    // A secret a keychain-less machine forgot at its last close is expected, not a failure: amber.
    const badge = status.state === 'disconnected' && status.reason === 'secretMissing' && noKeychain ? 'badge--cooling' : BADGES[status.state];
    body = (
      <>
        {/* A card only when it has more than the state to show; else the state alone. */}
        <div className={on || problem ? 'team__form' : 'team__state-only'} data-testid="team-status-card">
          <div className="team__status">
            <span className={`badge ${badge}`} role="status" data-testid="team-state" data-state={status.state}>
              {teamStateText(t, status, noKeychain)}
            </span>
          </div>
          {on && (
            <dl className="team__facts">
              <dt>{t('team.members')}</dt>
              <dd data-testid="team-members">{status.members.toLocaleString(intlTag)}</dd>
              <dt>{t('team.lastChange')}</dt>
              <dd data-testid="team-last-change">{status.lastChangeAt === null ? t('team.noChange') : new Date(status.lastChangeAt).toLocaleString(intlTag)}</dd>
            </dl>
          )}
          {problem && (
            <p className="form-error" role="alert" data-testid="team-problem">
              {problem}
            </p>
          )}
        </div>
        <form className="team__form" onSubmit={(e) => void form.submit(e)} noValidate aria-labelledby={`${titleId}-form`} data-testid="team-form">
          <h3 id={`${titleId}-form`}>{t('team.join')}</h3>
          <Field label={t('team.redisUrl')} hint={t('team.redisUrlHint')} error={form.errors.redisUrl} testId="team-redis-url-field">
            {({ id, describedBy, invalid }) => (
              <input
                ref={inputs.redisUrl}
                id={id}
                className="input input--mono"
                value={form.form.redisUrl}
                onChange={(e) => form.update('redisUrl', e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid}
                autoComplete="off"
                spellCheck={false}
                placeholder="redis://127.0.0.1:6379"
                data-testid="team-redis-url"
              />
            )}
          </Field>
          <Field label={t('team.name')} hint={form.errors.team ? t('team.nameHintShort') : t('team.nameHint')} error={form.errors.team} testId="team-name-field">
            {({ id, describedBy, invalid }) => (
              <input
                ref={inputs.team}
                id={id}
                className="input"
                value={form.form.team}
                onChange={(e) => form.update('team', e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid}
                autoComplete="off"
                spellCheck={false}
                data-testid="team-name"
              />
            )}
          </Field>
          <Field label={t('team.secret')} hint={secretHint} error={form.errors.secret} testId="team-secret-field">
            {({ id, describedBy, invalid }) => (
              <div className="input-with-button">
                <input
                  ref={inputs.secret}
                  id={id}
                  type="password"
                  className="input input--mono"
                  value={form.form.secret}
                  onChange={(e) => {
                    form.update('secret', e.target.value);
                    setGenerated(undefined);
                  }}
                  aria-describedby={describedBy}
                  aria-invalid={invalid}
                  autoComplete="off"
                  spellCheck={false}
                  data-testid="team-secret"
                />
                <button type="button" className="button" onClick={() => void generate()} data-testid="team-generate">
                  {t('team.generate')}
                </button>
              </div>
            )}
          </Field>
          {generated && (
            <div className="team__generated local-api__warning" data-testid="team-generated">
              <p>{t(noKeychain ? 'team.generatedWarningNoKeychain' : 'team.generatedWarning')}</p>
              <div className="input-with-button">
                <input className="input input--mono" readOnly value={generated} aria-label={t('team.generatedLabel')} data-testid="team-generated-secret" />
                <CopyButton text={() => generated} label={t('team.copySecret')} testId="team-copy-secret" />
              </div>
            </div>
          )}
          {form.formError && (
            <p className="form-error" role="alert" data-testid="team-form-error">
              {form.formError}
            </p>
          )}
          <div className="team__actions">
            <button type="submit" className="button button--primary" aria-busy={form.saving || undefined} data-testid="team-connect">
              {t(on ? 'team.reconnect' : 'team.connect')}
            </button>
            {on && (
              <button type="button" className="button" onClick={() => void disconnect()} aria-busy={leaving || undefined} data-testid="team-disconnect">
                {t('team.disconnect')}
              </button>
            )}
          </div>
        </form>
      </>
    );
  }

  return (
    <section className="team" aria-labelledby={titleId} data-testid="team-section">
      <header className="section-header">
        <h2 id={titleId}>{t('settings.team')}</h2>
        <p className="muted">{t('team.intro')}</p>
      </header>
      {body}
    </section>
  );
}
