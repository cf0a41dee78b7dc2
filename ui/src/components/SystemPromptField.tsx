import { useI18n } from '../i18n/I18nProvider';
import { formatNumber } from '../i18n/problems';
import { LIMITS } from '../ipc/bindings';
import { OptionalTextField } from './OptionalTextField';

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
    <OptionalTextField
      label={t('systemPrompt.label')}
      value={value}
      onChange={onChange}
      placeholder={t('systemPrompt.placeholder')}
      hint={hint ?? t('systemPrompt.hint')}
      error={error ?? (tooLong ? t('issue.tooLong', { max: formatNumber(t, LIMITS.systemPrompt.maxChars) }) : undefined)}
      multiline
      testId={testId}
    />
  );
}
