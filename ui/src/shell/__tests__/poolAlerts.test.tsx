import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { type Locale, loadDictionary, translate } from '../../i18n';
import { I18nProvider, useI18n } from '../../i18n/I18nProvider';
import type { PoolAlert } from '../../ipc/bindings';
import { createFakeBackend, type FakeBackend } from '../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { poolAlertText, usePoolAlerts } = await import('../poolAlerts');
const { GeneralSection } = await import('../../features/settings/GeneralSection');

const REFUSED: PoolAlert = { kind: 'keyDisabled', providerId: 'openai', provider: 'OpenAI', key: 'work…x9Qz', status: 401 };
const SPENT: PoolAlert = { kind: 'keyOutOfCredit', providerId: 'openai', provider: 'OpenAI', key: 'personal' };
const NONE_LEFT: PoolAlert = { kind: 'providerUnusable', providerId: 'openai', provider: 'OpenAI' };
const WINDOW: PoolAlert = { kind: 'keyWindowUsedUp', providerId: 'zai', provider: 'GLM', key: 'plan-1', resetsAt: Date.UTC(2026, 11, 8, 12, 0) };
const EXPIRING: PoolAlert = { kind: 'keyExpiring', providerId: 'bedrock', provider: 'Bedrock', key: 'short-term', expiresAt: Date.UTC(2026, 11, 8, 12, 0) };

function Listening() {
  const { t } = useI18n();
  usePoolAlerts(t);
  return null;
}

function renderApp(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <Listening />
      <GeneralSection />
    </I18nProvider>,
  );
  return user;
}

describe('pool alerts as desktop notifications', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('words each alert: the provider and the key as the user knows them, never more', () => {
    const t = (key: Parameters<typeof translate>[1], vars?: Parameters<typeof translate>[2]) => translate('en', key, vars);
    expect(poolAlertText(t, REFUSED)).toEqual({
      title: 'OpenAI: a key was refused',
      body: 'The provider refused the key work…x9Qz (HTTP 401). Keypool disabled it and uses the others.',
    });
    expect(poolAlertText(t, SPENT).title).toBe('OpenAI: a key is out of credit');
    expect(poolAlertText(t, NONE_LEFT)).toEqual({
      title: 'OpenAI has no usable key',
      body: 'Every key of OpenAI is disabled or out of credit: its requests fail until you add or enable one.',
    });
    expect(poolAlertText(t, WINDOW).title).toBe('GLM: a plan’s window is used up');
    expect(poolAlertText(t, WINDOW).body).toMatch(/^The key plan-1 has used up its plan’s window\. Keypool uses the others and takes it back when the window resets at Dec 8, 2026/);
    const expiring = poolAlertText(t, EXPIRING);
    expect(expiring.title).toBe('Bedrock: a key expires soon');
    expect(expiring.body).toMatch(/^The key short-term expires at Dec 8, 2026, \d{1,2}:00 [AP]M\. Replace it before then/);
  });

  it.each(['zh', 'ja', 'ru'] as const)('words them in %s', async (locale) => {
    await loadDictionary(locale);
    const t = (key: Parameters<typeof translate>[1], vars?: Parameters<typeof translate>[2]) => translate(locale, key, vars);
    const refused = poolAlertText(t, REFUSED);
    expect(refused.title).toContain('OpenAI');
    expect(refused.body).toContain('work…x9Qz');
    expect(refused.body).toContain('401');
    expect(poolAlertText(t, SPENT).body).toContain('personal');
    expect(poolAlertText(t, NONE_LEFT).body).toContain('OpenAI');
    expect(poolAlertText(t, EXPIRING).body).toContain('short-term');
    expect(poolAlertText(t, WINDOW).body).toContain('plan-1');
    for (const alert of [REFUSED, SPENT, NONE_LEFT]) {
      const { title, body } = poolAlertText(t, alert);
      expect(`${title} ${body}`, 'no English left').not.toMatch(/\b(key|refused|credit|usable)\b/);
    }
  });

  it('shows each alert the backend tells, until Settings → General switches them off', async () => {
    const user = renderApp();
    const toggle = await screen.findByRole('switch', { name: 'Desktop notifications when keys are lost' });
    expect(toggle).toHaveAttribute('aria-checked', 'true');
    expect(toggle).toHaveAccessibleDescription(/Once when a provider refuses a key/);
    backend.alert(REFUSED);
    await waitFor(() => expect(backend.notifications()).toHaveLength(1));
    expect(backend.notifications()[0]).toEqual({ title: 'OpenAI: a key was refused', body: expect.stringContaining('work…x9Qz (HTTP 401)') });

    await user.click(toggle);
    await waitFor(() => expect(toggle).toHaveAttribute('aria-checked', 'false'));
    expect(backend.callsOf('settings:update').at(-1)).toEqual({ notifyKeysLost: false });
    backend.alert(NONE_LEFT);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(backend.notifications(), 'switched off: nothing more').toHaveLength(1);

    await user.click(toggle);
    await waitFor(() => expect(toggle).toHaveAttribute('aria-checked', 'true'));
    backend.alert(NONE_LEFT);
    await waitFor(() => expect(backend.notifications()).toHaveLength(2));
  });
});
