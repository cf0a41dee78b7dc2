import type { ApiKey } from '../../../../ipc/bindings';
import { formatRelative } from '../../../../i18n/format';
import { formatNumber } from '../../../../i18n/problems';
import { useI18n } from '../../../../i18n/I18nProvider';
import { KeyBalanceLine } from './KeyBalance';
import { KeyBudget } from './KeyBudget';
import { KeyExpiryLine } from './KeyExpiry';
import { KeyWindowsLine } from './KeyWindows';
import { KeyTestResultLine } from './KeyTestResult';
import type { KeyRow } from '../keyRows';
import { ModelRests } from './ModelRests';
import { StateBadge } from './StateBadge';
import type { KeyCommands } from '../keyCommands';
import type { KeyTest } from '../useKeyTests';

/** The key's label, its masked preview, its tags (from the environment, its quota group) and its own limits. */
export function KeyNameCell({ apiKey: key }: { apiKey: ApiKey }) {
  const { t } = useI18n();
  return (
    <td className="key-row__name">
      {/* Cut to the column when long; the whole of it in its tooltip. */}
      <span className={`key-row__label${key.label ? '' : ' key-row__label--none'}`} title={key.label ?? undefined} data-testid="key-label">
        {key.label ?? t('key.unlabeled')}
      </span>
      <span className="key-row__preview">
        <code title={key.apiKeyPreview} data-testid="key-preview">
          {key.apiKeyPreview}
        </code>
        {key.isEnvRef && (
          // Truncated when the column is narrow (long translations); the whole text in its tooltip.
          <span className="tag key-row__tag" title={t('key.envRef')} data-testid="key-env-tag">
            {t('key.envRef')}
          </span>
        )}
        {key.quotaGroup !== null && (
          <span className="tag key-row__tag" title={t('key.quotaGroupHint', { group: key.quotaGroup })} data-testid="key-quota-group">
            {t('key.quotaGroup', { group: key.quotaGroup })}
          </span>
        )}
      </span>
      {(key.rpmLimit !== null || key.maxConcurrent !== null) && (
        <span className="key-row__limits" data-testid="key-limits">
          {t('limits.summary', {
            limits: [
              key.rpmLimit !== null ? t('limits.rpmShort', { count: key.rpmLimit }) : null,
              key.maxConcurrent !== null ? t('limits.concurrentShort', { count: key.maxConcurrent }) : null,
            ]
              .filter(Boolean)
              .join(' · '),
          })}
        </span>
      )}
    </td>
  );
}

interface StateProps {
  row: KeyRow;
  name: string;
  offset: number;
  test: KeyTest | undefined;
  commands: KeyCommands;
}

/** The key's state, what its models have left or rest for, its cooldown's reset, and its last test. */
export function KeyStateCell({ row, name, offset, test, commands }: StateProps) {
  const { t } = useI18n();
  const { key } = row;
  return (
    <td className="key-row__state">
      <StateBadge state={row.state} offset={offset} onCooldownEnd={commands.cooldownEnd} testId="key-state" />
      {row.state.kind !== 'disabled' && <ModelRests budgets={row.budgets} offset={offset} name={name} onEnd={commands.cooldownEnd} />}
      {row.state.kind !== 'disabled' && <KeyBudget budgets={row.budgets} offset={offset} name={name} />}
      {row.balance && <KeyBalanceLine balance={row.balance} />}
      {row.expiresAt !== null && <KeyExpiryLine expiresAt={row.expiresAt} offset={offset} />}
      {row.windows && row.windows.windows.length + (row.windows.problem ? 1 : 0) > 0 && <KeyWindowsLine windows={row.windows} offset={offset} />}
      {row.state.kind === 'cooling' && (
        <button
          type="button"
          className="link-button"
          aria-label={t('key.resetCooldownLabel', { name })}
          onClick={() => commands.resetCooldown(key.id)}
          data-testid="key-reset-cooldown"
        >
          {t('key.resetCooldown')}
        </button>
      )}
      {test && <KeyTestResultLine test={test} />}
      {!key.enabled && test?.kind === 'done' && test.result.ok && (
        <button type="button" className="link-button" aria-label={t('key.enableLabel', { name })} onClick={() => commands.enable(key.id)} data-testid="key-enable">
          {t('key.enable')}
        </button>
      )}
    </td>
  );
}

/** Today's requests, tokens and failures, the requests in flight, and when the key was last used. */
export function KeyUsageCell({ row, offset }: { row: KeyRow; offset: number }) {
  const { t, intlTag } = useI18n();
  const now = Date.now() + offset;
  return (
    <td className="key-row__usage" data-testid="key-usage">
      <span className="key-row__counts">
        <span className="key-row__today" data-testid="key-today">
          {/* Cut to the column when narrow; the whole of each in its tooltip. */}
          <span title={t('usage.todayRequests', { count: row.today.requests })}>{t('usage.todayRequests', { count: row.today.requests })}</span>{' '}
          <span title={t('usage.todayTokens', { count: row.today.tokens })}>{t('usage.todayTokens', { count: row.today.tokens })}</span>
        </span>
        {row.today.failures > 0 && (
          <span className="key-row__failures" data-testid="key-today-failures">
            {t('usage.failures', { count: formatNumber(t, row.today.failures) })}
          </span>
        )}
        {row.inFlight > 0 && <span data-testid="key-in-flight">{t('usage.inFlight', { count: row.inFlight })}</span>}
      </span>
      <span className="muted">{row.lastUsedAt === null ? t('usage.never') : t('usage.lastUsed', { when: formatRelative(row.lastUsedAt, now, intlTag) })}</span>
    </td>
  );
}
