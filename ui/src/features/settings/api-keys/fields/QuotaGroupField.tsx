import { OptionalTextField } from '../../../../components/OptionalTextField';
import { useI18n } from '../../../../i18n/I18nProvider';

interface Props {
  value: string;
  onChange: (value: string) => void;
  /** What the field is for here: one key, or every pasted key. */
  hint: string;
  error?: string;
  inputRef?: React.Ref<HTMLInputElement>;
  testId: string;
}

/** A key's quota group, optional free text: the keys a provider counts together share one. */
export function QuotaGroupField(props: Props) {
  const { t } = useI18n();
  return <OptionalTextField {...props} label={t('add.quotaGroup')} placeholder={t('add.quotaGroupPlaceholder')} verbatim />;
}
