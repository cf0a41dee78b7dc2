import { Field } from './Field';
import { useI18n } from '../i18n/I18nProvider';
import { formatNumber } from '../i18n/problems';
import { LIMITS } from '../ipc/bindings';

/** Whether a system prompt is longer than the backend takes. */
export function systemPromptTooLong(text: string): boolean {
  return [...text].length > LIMITS.systemPrompt.maxChars;
}

interface Props {
  value: string;
  onChange: (value: string) => void;
  hint?: string;
  error?: string;
  testId: string;
}

/** A system prompt: sent first with every request of the chat; empty for none. */
export function SystemPromptField({ value, onChange, hint, error, testId }: Props) {
  const { t } = useI18n();
  const tooLong = systemPromptTooLong(value);
  return (
    <Field
      label={
        <>
          {t('systemPrompt.label')} <span className="field__optional">({t('add.optional')})</span>
        </>
      }
      hint={hint ?? t('systemPrompt.hint')}
      error={error ?? (tooLong ? t('issue.tooLong', { max: formatNumber(t, LIMITS.systemPrompt.maxChars) }) : undefined)}
      testId={testId}
    >
      {({ id, describedBy, invalid }) => (
        <textarea
          id={id}
          className="input textarea textarea--short"
          placeholder={t('systemPrompt.placeholder')}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          value={value}
          onChange={(e) => onChange(e.target.value)}
          data-testid={`${testId}-input`}
        />
      )}
    </Field>
  );
}
