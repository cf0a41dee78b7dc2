import { useId, useRef, useState } from 'react';
import { Dialog } from '../../../components/Dialog';
import { Field } from '../../../components/Field';
import { FormActions } from '../../../components/FormActions';
import { useFieldForm } from '../../../forms/useFieldForm';
import { useI18n } from '../../../i18n/I18nProvider';
import type { MessageKey } from '../../../i18n';
import type { BudgetPeriod, NamedToken, TokenRulesInput } from '../../../ipc/bindings';
import { type BudgetUnit, PERIODS, periodWord, RULE_FIELDS, RULE_PATHS, type RuleField, parseRules, rulesForm } from './tokenRules';

interface Props {
  token: NamedToken;
  /** Resolves once stored; rejects with the backend's error, shown at its field. */
  onSave: (rules: TokenRulesInput) => Promise<unknown>;
  onClose: () => void;
}

/** The number and text fields, in the order shown. */
const INPUTS: readonly { field: Exclude<RuleField, 'budget'>; label: MessageKey; hint: MessageKey; type: 'number' | 'text' | 'date' }[] = [
  { field: 'requestsPerMinute', label: 'namedTokens.rpm', hint: 'namedTokens.rpmHint', type: 'number' },
  { field: 'tokensPerMinute', label: 'namedTokens.tpm', hint: 'namedTokens.tpmHint', type: 'number' },
  { field: 'maxInFlight', label: 'namedTokens.inFlight', hint: 'namedTokens.inFlightHint', type: 'number' },
  { field: 'models', label: 'namedTokens.models', hint: 'namedTokens.modelsHint', type: 'text' },
  { field: 'expires', label: 'namedTokens.expires', hint: 'namedTokens.expiresHint', type: 'date' },
];

/**
 * What a named token may do, as a server's member may: a budget (dollars at the Usage page's
 * prices, or tokens) per day, week, month or in total, requests and tokens per minute, requests
 * at once, the models it may ask for, and the day after which it stops. Each empty field is no
 * limit. The endpoint enforces them from the next request on, refusing in the client's own API.
 */
export function TokenRulesDialog({ token, onSave, onClose }: Props) {
  const { t } = useI18n();
  const bodyId = useId();
  const unitId = useId();
  const periodId = useId();
  const initial = rulesForm(token.rules);
  const [unit, setUnit] = useState<BudgetUnit>(initial.unit);
  const [period, setPeriod] = useState<BudgetPeriod>(initial.period);
  const inputs: Record<RuleField, React.RefObject<HTMLInputElement | null>> = {
    budget: useRef<HTMLInputElement>(null),
    requestsPerMinute: useRef<HTMLInputElement>(null),
    tokensPerMinute: useRef<HTMLInputElement>(null),
    maxInFlight: useRef<HTMLInputElement>(null),
    models: useRef<HTMLInputElement>(null),
    expires: useRef<HTMLInputElement>(null),
  };
  const { form, errors, formError, saving, update, submit } = useFieldForm({
    fields: RULE_FIELDS,
    initial: () => initial.form,
    inputs,
    parse: (f) => parseRules(f, unit, period),
    issuePaths: RULE_PATHS,
    save: async (rules) => {
      await onSave(rules);
      onClose();
    },
  });

  return (
    <Dialog title={t('namedTokens.rulesTitle', { name: token.name })} onClose={onClose} initialFocus={inputs.budget} describedBy={bodyId} testId="token-rules-dialog">
      <form className="dialog__form" onSubmit={submit} noValidate>
        <p className="field__hint" id={bodyId}>
          {t('namedTokens.rulesBody')}
        </p>
        {formError && (
          <p className="form-error" role="alert" data-testid="token-rules-error">
            {t('namedTokens.saveFailed', { message: formError })}
          </p>
        )}
        <Field label={t('namedTokens.budget')} hint={t('namedTokens.budgetHint')} error={errors.budget} testId="token-rules-budget">
          {({ id, describedBy, invalid }) => (
            <div className="token-rules__budget">
              <input
                ref={inputs.budget}
                id={id}
                className="input"
                inputMode="decimal"
                value={form.budget}
                onChange={(e) => update('budget', e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                autoComplete="off"
                data-testid="token-rules-budget-input"
              />
              <label className="visually-hidden" htmlFor={unitId}>
                {t('namedTokens.budgetUnit')}
              </label>
              <select id={unitId} className="select" value={unit} onChange={(e) => setUnit(e.target.value as BudgetUnit)} data-testid="token-rules-unit">
                <option value="usd">{t('namedTokens.unitUsd')}</option>
                <option value="tokens">{t('namedTokens.unitTokens')}</option>
              </select>
              <label className="visually-hidden" htmlFor={periodId}>
                {t('namedTokens.budgetPeriod')}
              </label>
              <select id={periodId} className="select" value={period} onChange={(e) => setPeriod(e.target.value as BudgetPeriod)} data-testid="token-rules-period">
                {PERIODS.map((p) => (
                  <option key={p} value={p}>
                    {periodWord(t, p)}
                  </option>
                ))}
              </select>
            </div>
          )}
        </Field>
        {INPUTS.map(({ field, label, hint, type }) => (
          <Field key={field} label={t(label)} hint={t(hint)} error={errors[field]} testId={`token-rules-${field}`}>
            {({ id, describedBy, invalid }) => (
              <input
                ref={inputs[field]}
                id={id}
                className={field === 'models' ? 'input input--mono' : 'input'}
                type={type === 'date' ? 'date' : 'text'}
                inputMode={type === 'number' ? 'numeric' : undefined}
                value={form[field]}
                onChange={(e) => update(field, e.target.value)}
                aria-describedby={describedBy}
                aria-invalid={invalid || undefined}
                autoComplete="off"
                spellCheck={false}
                data-testid={`token-rules-${field}-input`}
              />
            )}
          </Field>
        ))}
        <FormActions onCancel={onClose} busy={saving} label={t('namedTokens.save')} busyLabel={t('namedTokens.saving')} testId="token-rules-save" cancelTestId="token-rules-cancel" />
      </form>
    </Dialog>
  );
}
