import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { Locale } from '../../../../../i18n';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import type { RowState } from '../../keyRows';
import { StateBadge } from '../StateBadge';

function badge(locale: Locale, state: RowState, offset = 0) {
  render(
    <I18nProvider initial={locale}>
      <StateBadge state={state} offset={offset} onCooldownEnd={() => {}} testId="state" />
    </I18nProvider>,
  );
  return screen.getByTestId('state');
}

describe('the state badge of a key out of credit', () => {
  const nextProbe = new Date(2026, 0, 15, 14, 25).getTime();
  const backendNow = new Date(2026, 0, 15, 14, 10).getTime();
  const cases: [Locale, string, string][] = [
    ['en', 'Out of credit · next check at 14:25', 'Out of credit'],
    ['zh', '额度已用尽 · 14:25 再次检查', '额度已用尽'],
    ['ja', 'クレジット切れ · 14:25 に再確認', 'クレジット切れ'],
    ['ru', 'Закончился баланс · проверка в 14:25', 'Закончился баланс'],
  ];

  it.each(cases)('%s: says so, with the time of the next check by the backend clock', (locale, withProbe) => {
    const state = badge(locale, { kind: 'exhausted', nextProbeAt: nextProbe }, backendNow - Date.now());
    expect(state).toHaveTextContent(withProbe);
    expect(state, 'a state of its own, neither cooling nor disabled').toHaveAttribute('data-state', 'exhausted');
    expect(state).not.toHaveAttribute('role', 'timer');
  });

  it.each(cases)('%s: without a planned check, says only that it is out of credit', (locale, _withProbe, without) => {
    expect(badge(locale, { kind: 'exhausted', nextProbeAt: null })).toHaveTextContent(new RegExp(`^${without}$`));
  });
});

describe('the state badge of a key whose keychain is not reachable', () => {
  it.each([
    ['en', 'Unavailable: keychain not reachable'],
    ['zh', '不可用：无法连接钥匙串'],
    ['ja', '利用不可: キーチェーンに接続できません'],
    ['ru', 'Недоступен: нет связи со связкой ключей'],
  ] as [Locale, string][])('%s: says it is unavailable, not deleted, and why', (locale, text) => {
    const state = badge(locale, { kind: 'unavailable' });
    expect(state).toHaveTextContent(text);
    expect(state).toHaveAttribute('data-state', 'unavailable');
    expect(state.getAttribute('title'), 'the hint says it is not deleted').toBeTruthy();
  });
});

describe('the state badge of a $NAME key whose variable is unset', () => {
  it.each([
    ['en', 'Variable not set'],
    ['zh', '变量未设置'],
    ['ja', '変数が未設定'],
    ['ru', 'Переменная не задана'],
  ] as [Locale, string][])('%s: says so, naming the variable in its tooltip', (locale, text) => {
    const state = badge(locale, { kind: 'unsetVar', name: 'OPENAI_API_KEY' });
    expect(state).toHaveTextContent(new RegExp(`^${text}$`));
    expect(state).toHaveAttribute('data-state', 'unsetVar');
    expect(state.getAttribute('title')).toContain('OPENAI_API_KEY');
  });
});
