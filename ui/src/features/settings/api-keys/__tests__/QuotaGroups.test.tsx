import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import type { Budget } from '../../../../ipc/bindings';
import type { LanguagePreference } from '../../../../preferences';
import { createFakeBackend, provider, type FakeBackend } from '../../../../test/fakeBackend';

/*
 * The key table for pools whose keys share quotas (Gemini's projects, OpenAI's organizations):
 * a key's quota group set when it is added (alone or pasted), shown in its row and filtered by,
 * and a model resting on its own: used up for the day until the provider's day ends, in the
 * user's time and language, or cooling after its per-minute quota.
 */

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ProvidersSection } = await import('../../providers/ProvidersSection');

function renderSection(language: LanguagePreference = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={language}>
      <ProvidersSection />
    </I18nProvider>,
  );
  return user;
}

const rows = () => screen.queryAllByTestId('key-row');
const labels = () => rows().map((r) => within(r).getByTestId('key-label').textContent);
const row = (name: string) => {
  const found = rows().find((r) => within(r).queryByText(name));
  if (!found) throw new Error(`no row ${name}`);
  return found;
};

const budget = (scope: string, fields: Partial<Budget>): Budget => ({
  scope,
  requests: null,
  tokens: null,
  reservedRequests: 0,
  coolingUntil: null,
  usedUpUntil: null,
  ...fields,
});

describe('quota groups in the key table', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('adds a key in a quota group, trimmed, and refuses one too long before sending', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Add key' }));
    const dialog = screen.getByRole('dialog', { name: 'Add an API key' });
    const group = within(dialog).getByLabelText(/Quota group/);
    expect(group, 'the field says what a group is for').toHaveAccessibleDescription(/Google Cloud project/);
    await user.type(within(dialog).getByLabelText('API key'), 'AIza-group-0001');
    await user.type(group, 'p'.repeat(65));
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    expect(group).toHaveAccessibleDescription(/^A quota group is at most 64 characters./);
    expect(backend.callsOf('llmConfig:addApiKey'), 'nothing is sent while the group is too long').toEqual([]);

    await user.clear(group);
    await user.type(group, '  my-project-7  ');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:addApiKey')).toEqual([{ providerId: 'openai', apiKey: 'AIza-group-0001', weight: 1, quotaGroup: 'my-project-7' }]);
    expect(within(await screen.findByTestId('key-row')).getByTestId('key-quota-group'), 'the row shows its group').toHaveTextContent('Group: my-project-7');
  });

  it('puts every pasted key in the group given once, and none when it is left empty', async () => {
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Paste several' }));
    const dialog = screen.getByRole('dialog', { name: 'Paste several keys' });
    await user.click(within(dialog).getByLabelText('Keys, one per line'));
    await user.paste('AIza-paste-0001\nAIza-paste-0002');
    await user.type(within(dialog).getByLabelText(/Quota group/), 'project-a');
    await user.click(within(dialog).getByRole('button', { name: 'Add keys' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.keys().map((k) => k.quotaGroup), 'both joined the group').toEqual(['project-a', 'project-a']);

    await user.click(screen.getByRole('button', { name: 'Paste several' }));
    await user.click(screen.getByLabelText('Keys, one per line'));
    await user.paste('AIza-paste-0003');
    await user.click(screen.getByRole('button', { name: 'Add keys' }));
    await waitFor(() => expect(backend.keys()).toHaveLength(3));
    expect(backend.callsOf('llmConfig:addApiKey').at(-1), 'no group: the field is not sent').toEqual({ providerId: 'openai', apiKey: 'AIza-paste-0003', weight: 1 });
  });

  it('filters the table by quota group, and a reorder there keeps every other key in its place', async () => {
    backend.add('openai', 'sk-a-0001', { label: 'alpha', sortOrder: 0, quotaGroup: 'org-1' });
    backend.add('openai', 'sk-b-0002', { label: 'beta', sortOrder: 1 });
    backend.add('openai', 'sk-c-0003', { label: 'gamma', sortOrder: 2, quotaGroup: 'org-1' });
    backend.add('openai', 'sk-d-0004', { label: 'delta', sortOrder: 3, quotaGroup: 'org-2' });
    const user = renderSection();
    const filter = await screen.findByRole('combobox', { name: 'Quota group' });
    expect([...(filter as HTMLSelectElement).options].map((o) => o.textContent)).toEqual(['All groups', 'org-1', 'org-2', 'No group']);
    expect(labels()).toEqual(['alpha', 'beta', 'gamma', 'delta']);

    await user.selectOptions(filter, 'org-1');
    expect(labels(), 'only the group’s keys').toEqual(['alpha', 'gamma']);
    expect(screen.getByTestId('pool-filtered')).toHaveTextContent('Showing 2 of 4 keys.');
    screen.getByRole('button', { name: 'Move alpha' }).focus();
    await user.keyboard('{ArrowDown}');
    expect(backend.callsOf('llmConfig:reorderApiKeys'), 'alpha and gamma trade places; beta and delta stay').toEqual([
      { providerId: 'openai', ids: ['key-3', 'key-2', 'key-1', 'key-4'] },
    ]);
    await waitFor(() => expect(labels()).toEqual(['gamma', 'alpha']));

    await user.selectOptions(filter, 'No group');
    expect(labels()).toEqual(['beta']);
    await user.selectOptions(filter, 'All groups');
    expect(labels()).toEqual(['gamma', 'beta', 'alpha', 'delta']);
    expect(screen.queryByTestId('pool-filtered')).not.toBeInTheDocument();
  });

  it('shows no filter while no key has a group', async () => {
    backend.add('openai', 'sk-a-0001', { label: 'alpha' });
    renderSection();
    await screen.findByText('alpha');
    expect(screen.queryByRole('combobox', { name: 'Quota group' })).not.toBeInTheDocument();
    expect(screen.queryByTestId('key-quota-group')).not.toBeInTheDocument();
  });
});

describe('a model resting while its key serves the others', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  /** The backend's now, 02:00 in the user's zone; the provider's day ends at 09:00 here. */
  const now = new Date(2026, 0, 15, 2, 0).getTime();
  const dayEnd = new Date(2026, 0, 15, 9, 0).getTime();

  it('says a model’s day is used up until the day ends, in the user’s time, and counts a per-minute rest down', async () => {
    backend = createFakeBackend(now, { providers: [provider('gemini', 'Google Gemini', { kind: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com' })] });
    const key = backend.add('gemini', 'AIza-rest-0001', { label: 'project key' });
    backend.setLive(key.id, {
      budgets: [budget('gemini-2.5-pro', { usedUpUntil: dayEnd }), budget('gemini-2.5-flash', { coolingUntil: now + 37_000 })],
    });
    renderSection();
    expect(await screen.findByRole('heading', { name: 'Google Gemini' })).toBeInTheDocument();
    const state = within(await waitFor(() => row('project key'))).getByTestId('key-state');
    expect(state, 'the key itself serves').toHaveTextContent('Active');
    const rests = within(row('project key')).getByRole('list', { name: 'Models of project key at rest' });
    const [pro, flash] = within(rests).getAllByRole('listitem');
    expect(pro).toHaveTextContent('gemini-2.5-proDaily quota used up until 09:00');
    expect(within(pro).getByText(/Daily quota/), 'why, and when it comes back').toHaveAttribute('title', expect.stringMatching(/midnight in Los Angeles/));
    expect(flash).toHaveTextContent('gemini-2.5-flashCooling, 0:37 left');
    expect(within(flash).getByRole('timer')).toBeInTheDocument();
    expect(within(row('project key')).queryByRole('button', { name: /Reset the cooldown/ }), 'a model’s rest is not the key’s cooldown').not.toBeInTheDocument();
  });

  it.each([
    ['zh', '每日配额已用完，09:00 恢复'],
    ['ja', '1日のクォータを使い切りました（09:00 まで）'],
    ['ru', 'Дневная квота исчерпана до 09:00'],
  ] as const)('words a used-up day in %s', async (language, words) => {
    backend.setClock(now);
    const key = backend.add('openai', 'sk-rest-0001', { label: 'k' });
    backend.setLive(key.id, { budgets: [budget('m', { usedUpUntil: dayEnd })] });
    renderSection(language);
    const rest = await screen.findByTestId('key-model-rest');
    expect(rest).toHaveTextContent(words);
    expect(rest.dataset.kind).toBe('usedUp');
  });

  it('drops a rest once it is over and asks the pool again', async () => {
    backend.setClock(Date.now());
    const key = backend.add('openai', 'sk-rest-0002', { label: 'k' });
    backend.setLive(key.id, { budgets: [budget('m', { coolingUntil: Date.now() + 1_200 })] });
    renderSection();
    await screen.findByTestId('key-model-rest');
    const before = backend.callsOf('llmConfig:getPoolStatus').length;
    await waitFor(() => expect(screen.queryByTestId('key-model-rest')).not.toBeInTheDocument(), { timeout: 3000 });
    await waitFor(() => expect(backend.callsOf('llmConfig:getPoolStatus').length, 'the status is fetched again').toBeGreaterThan(before));
  });
});
