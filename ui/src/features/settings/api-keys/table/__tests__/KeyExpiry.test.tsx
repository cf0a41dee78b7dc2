import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Locale } from '../../../../../i18n';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import { KeyExpiryLine } from '../KeyExpiry';

const BACKEND_NOW = new Date(2026, 11, 7, 9, 0).getTime();

function renderExpiry(expiresAt: number, locale: Locale = 'en') {
  render(
    <I18nProvider initial={locale}>
      <KeyExpiryLine expiresAt={expiresAt} offset={BACKEND_NOW - Date.now()} />
    </I18nProvider>,
  );
  return screen.getByTestId('key-expiry');
}

afterEach(cleanup);

describe('when a key expires', () => {
  it('says when, in the backend’s time, and marks it within a week', () => {
    const soon = renderExpiry(new Date(2026, 11, 7, 21, 0).getTime());
    expect(soon).toHaveTextContent(/^Expires 21:00$/);
    expect(soon).toHaveAttribute('data-expiry', 'soon');
    cleanup();
    expect(renderExpiry(BACKEND_NOW + 30 * 86_400_000)).toHaveAttribute('data-expiry', 'later');
  });

  it('says it expired once past, in every language', () => {
    const past = new Date(2026, 11, 7, 8, 0).getTime();
    expect(renderExpiry(past)).toHaveTextContent('Expired 08:00');
    cleanup();
    expect(renderExpiry(past, 'ru')).toHaveTextContent('Истёк 08:00');
    cleanup();
    expect(renderExpiry(past, 'zh')).toHaveTextContent('已于 08:00 过期');
  });
});
