import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Locale } from '../../../../i18n';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { LimitsDialog } from '../LimitsDialog';

describe('the limits dialog speaks the UI language', () => {
  it.each([
    ['en', 'Limits of prod', 'Requests per minute', 'Requests at once', 'Save limits'],
    ['zh', 'prod 的限额', '每分钟请求数', '同时请求数', '保存限额'],
    ['ja', 'prod の制限', '1 分あたりのリクエスト数', '同時リクエスト数', '制限を保存'],
    ['ru', 'Лимиты ключа prod', 'Запросов в минуту', 'Запросов одновременно', 'Сохранить лимиты'],
  ] as const)('%s', (locale: Locale, title, rpm, concurrent, save) => {
    render(
      <I18nProvider initial={locale}>
        <LimitsDialog name="prod" current={{ rpmLimit: 30, maxConcurrent: null }} onSave={async () => {}} onClose={() => {}} />
      </I18nProvider>,
    );
    const dialog = screen.getByRole('dialog', { name: title });
    expect(within(dialog).getByLabelText(rpm)).toHaveValue('30');
    expect(within(dialog).getByLabelText(concurrent)).toHaveValue('');
    expect(within(dialog).getByRole('button', { name: save })).toBeInTheDocument();
  });
});
