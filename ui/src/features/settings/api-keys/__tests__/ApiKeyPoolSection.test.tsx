import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import type { Budget } from '../../../../ipc/bindings';
import type { LanguagePreference } from '../../../../preferences';
import { createFakeBackend, provider, type FakeBackend } from '../../../../test/fakeBackend';
import { attempt } from '../../../../test/fakeLedger';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ProvidersSection } = await import('../../providers/ProvidersSection');

const SECRET = 'sk-test-AAAAAAAAAAAAAAAAAAAAAAAA9f3a';

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
const row = (name: RegExp | string) => {
  const found = rows().find((r) => within(r).queryByText(name));
  if (!found) throw new Error(`no row ${name}`);
  return found;
};

async function openAdd(user: ReturnType<typeof userEvent.setup>) {
  await user.click(await screen.findByRole('button', { name: 'Add key' }));
  return screen.getByRole('dialog', { name: 'Add an API key' });
}

describe('API Key Pool section', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('explains the pool when it is empty, naming the provider-level key it falls back to', async () => {
    renderSection();
    const empty = await screen.findByTestId('pool-empty');
    expect(empty).toHaveTextContent('No keys in the pool yet');
    expect(empty, 'weights are explained').toHaveTextContent('weight 3 gets three for every one');
    expect(empty, 'the fallback is named').toHaveTextContent('the provider-level key (sk-…prov) is used');
    expect(screen.getByTestId('provider-base-url')).toHaveTextContent('https://openai.example/v1');
    expect(screen.getByTestId('provider-key')).toHaveTextContent('sk-…prov');
  });

  it('says how weights hand out new chats: a share each, spread out, not in runs', async () => {
    const user = renderSection();
    const empty = await screen.findByTestId('pool-empty');
    // The pool interleaves (smooth weighted round-robin): weights 100 and 5 give the heavy key the
    // first chats and the light one about one in 21, never a run of the light key's weight.
    expect(empty).toHaveTextContent('spread out rather than in a row');
    expect(empty).toHaveTextContent('weights 100 and 5: the heavier key serves first, the lighter one about one new chat in 21');
    expect(empty).not.toHaveTextContent(/list’s order|a run of/);
    const dialog = await openAdd(user);
    expect(within(dialog).getByLabelText('Weight')).toHaveAccessibleDescription(/the key’s share of new chats against the other keys’ weights, spread out/);
  });

  it('shows the chosen provider: its settings and its own pool', async () => {
    backend.add('anthropic', 'sk-ant-XXXXXXXX1111', { label: 'claude team' });
    const user = renderSection();
    await screen.findByTestId('pool-empty');
    await user.click(screen.getByRole('button', { name: /Anthropic/ }));
    expect(await screen.findByText('claude team')).toBeInTheDocument();
    expect(screen.getByTestId('provider-key'), 'no provider-level key').toHaveTextContent('Not set');
    expect(screen.getByRole('button', { name: /Anthropic/ })).toHaveAttribute('aria-current', 'true');
  });

  it('lists keys in sortOrder with label, masked key, weight, switch, state and counts', async () => {
    const b = backend.add('openai', 'sk-bbbbbbbbbb2222', { label: 'second', sortOrder: 1, weight: 2 });
    backend.add('openai', '$TEAM_KEY', { label: 'first', sortOrder: 0, weight: 3 });
    backend.setLive(b.id, { requestCount: 99, failureCount: 9, lastUsedAt: Date.UTC(2026, 0, 15, 14, 8) });
    // Today by the backend's clock (the UI's may be off), in the user's time zone.
    const now = backend.now();
    const midnight = new Date(now);
    midnight.setHours(0, 0, 0, 0);
    backend.usage.setAttempts([
      ...Array.from({ length: 10 }, () => attempt(now - 60_000, 'openai', b.id)),
      attempt(now - 60_000, 'openai', b.id, { outcome: 'failed', inputTokens: 0, cachedTokens: 0, outputTokens: 0 }),
      attempt(now - 60_000, 'openai', b.id, { outcome: 'rateLimited', inputTokens: 0, cachedTokens: 0, outputTokens: 0 }),
      attempt(midnight.getTime() - 1, 'openai', b.id, { inputTokens: 5_000 }),
    ]);
    renderSection();
    await screen.findByText('first');
    expect(rows().map((r) => within(r).getByTestId('key-label').textContent)).toEqual(['first', 'second']);
    const second = row('second');
    expect(within(second).getByTestId('key-preview')).toHaveTextContent('sk-…2222');
    expect(within(second).getByRole('textbox', { name: 'Weight of second' })).toHaveValue('2');
    expect(within(second).getByRole('switch', { name: 'Use second' })).toHaveAttribute('aria-checked', 'true');
    expect(within(second).getByTestId('key-state')).toHaveTextContent('Active');
    expect(within(second).getByTestId('key-today'), 'today’s use from the ledger, not the counters since the start').toHaveTextContent('Today: 12 requests 1,200 tokens');
    expect(within(second).getByTestId('key-today-failures')).toHaveTextContent('Failures: 2');
    expect(within(row('first')).getByTestId('key-today')).toHaveTextContent('Today: 0 requests 0 tokens');
    expect(within(row('first')).queryByTestId('key-today-failures'), 'no failures, no word of them').not.toBeInTheDocument();
    expect(within(second).getByTestId('key-usage'), 'relative to the backend clock').toHaveTextContent('Last used 2 minutes ago');
    expect(within(row('first')).getByText('from the environment'), 'an env reference is marked').toBeInTheDocument();
    expect(screen.getByTestId('pool-summary')).toHaveTextContent('Keys on: 2 of 2');
  });

  it('adds a key from a password field and keeps no copy of the secret once saved', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    const keyField = within(dialog).getByLabelText('API key');
    expect(keyField, 'the key is typed into a password field').toHaveAttribute('type', 'password');
    expect(keyField, 'the dialog opens on the key field').toHaveFocus();
    await user.type(keyField, SECRET);
    await user.type(within(dialog).getByLabelText(/Label/), 'prod');
    await user.clear(within(dialog).getByLabelText('Weight'));
    await user.type(within(dialog).getByLabelText('Weight'), '3');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:addApiKey')).toEqual([{ providerId: 'openai', apiKey: SECRET, label: 'prod', weight: 3 }]);
    expect(within(row('prod')).getByTestId('key-preview')).toHaveTextContent('sk-…9f3a');
    expect(document.body.innerHTML, 'the full key is nowhere in the page').not.toContain('AAAAAAAAAAAA');
    expect(screen.getByTestId('pool-added'), 'said where it is seen').toHaveTextContent('1 key added.');
    expect(row('prod'), 'the new row is marked').toHaveClass('key-row--fresh');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Add key' }), 'focus goes back to Add key').toHaveFocus());

    const again = await openAdd(user);
    expect(within(again).getByLabelText('API key'), 'the form starts empty again').toHaveValue('');
  });

  it('orders Edit key’s fields as Add key orders them, the key itself apart', async () => {
    backend.add('openai', 'sk-order-0001', { label: 'ordered' });
    const user = renderSection();
    // The labelled controls in document order, the key's own field left out (required in Add,
    // an optional replacement in Edit).
    const order = (dialog: HTMLElement) =>
      [...dialog.querySelectorAll('input, textarea, select')]
        .map((control) => (control.id ? dialog.querySelector(`label[for="${control.id}"]`)?.textContent?.trim() : null))
        .filter((label): label is string => !!label && !/API key|Replace the key/i.test(label));
    const add = await openAdd(user);
    const addOrder = order(add);
    await user.click(within(add).getByRole('button', { name: 'Cancel' }));
    await user.click(await screen.findByRole('button', { name: 'Edit ordered' }));
    const editOrder = order(screen.getByRole('dialog', { name: 'Edit ordered' }));
    expect(addOrder.length, `the fields found: ${addOrder}`).toBeGreaterThan(3);
    expect(editOrder).toEqual(addOrder);
  });

  it('says "1 key added." until the next action on the pool', async () => {
    backend.add('openai', 'sk-older-0001', { label: 'older' });
    const user = renderSection();
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-newest-0001');
    await user.type(within(dialog).getByLabelText(/Label/), 'newest');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    await waitFor(() => expect(screen.getByTestId('pool-added')).toHaveTextContent('1 key added.'));

    // Another action: the older key switched off.
    await user.click(within(row('older')).getByRole('switch'));
    await waitFor(() => expect(backend.keys().find((k) => k.label === 'older')?.enabled).toBe(false));
    expect(screen.getByTestId('pool-added'), 'old news is not kept on screen').toHaveTextContent('');
    expect(row('newest'), 'nor is the row still marked new').not.toHaveClass('key-row--fresh');
  });

  it('sends only the fields given: no label, default weight, never null', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-minimal-0001');
    await user.keyboard('{Enter}');
    await screen.findByText('sk-…0001');
    expect(backend.callsOf('llmConfig:addApiKey')).toEqual([{ providerId: 'openai', apiKey: 'sk-minimal-0001', weight: 1 }]);
  });

  it('shows a client-side error at its field and sends nothing', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-one sk-two');
    await user.clear(within(dialog).getByLabelText('Weight'));
    await user.type(within(dialog).getByLabelText('Weight'), '0');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));

    const keyField = within(dialog).getByLabelText('API key');
    expect(keyField).toHaveAttribute('aria-invalid', 'true');
    expect(keyField).toHaveAccessibleDescription(/no spaces or line breaks/);
    expect(within(dialog).getByLabelText('Weight')).toHaveAccessibleDescription(/whole number from 1 to 100/);
    expect(keyField, 'focus goes to the first field in error').toHaveFocus();
    expect(backend.callsOf('llmConfig:addApiKey'), 'nothing was sent').toEqual([]);
  });

  it('shows the backend’s validation issue and a duplicate key at the key field', async () => {
    const user = renderSection();
    backend.rejectNext('llmConfig:addApiKey', { code: 'validation', message: 'apiKey: bad', issues: [{ path: 'apiKey', code: 'key_has_spaces', message: 'rejected by the backend' }] });
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-dup-0001');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    expect(await within(dialog).findByTestId('add-key-apikey-error')).toHaveTextContent('A key has no spaces or line breaks');
    expect(within(dialog).getByTestId('add-key-apikey-error'), 'worded from the code, not the backend’s English').not.toHaveTextContent('rejected by the backend');

    backend.add('openai', 'sk-dup-0001');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    await waitFor(() => expect(within(dialog).getByTestId('add-key-apikey-error')).toHaveTextContent('This key is already in the provider’s pool.'));
    expect(screen.getByRole('dialog'), 'the dialog stays open for a fix').toBeInTheDocument();
  });

  it('takes optional limits for a provider that announces none, and shows them in the row', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    const limits = within(dialog).getByRole('group', { name: 'Limits for providers that announce none (optional)' });
    expect(limits).toHaveAccessibleDescription(/leave a field empty for no limit/);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-limited-0001');
    await user.type(within(limits).getByLabelText('Requests per minute'), '60');
    await user.type(within(limits).getByLabelText('Requests at once'), '2');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));

    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:addApiKey')).toEqual([{ providerId: 'openai', apiKey: 'sk-limited-0001', weight: 1, rpmLimit: 60, maxConcurrent: 2 }]);
    expect(within(row('sk-…0001')).getByTestId('key-limits')).toHaveTextContent('Your limits: 60/min · 2 at once');
  });

  it('checks the limits in the add dialog before sending, and shows the backend’s issue at its field', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-limited-0001');
    await user.type(within(dialog).getByLabelText('Requests at once'), '1001');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    const concurrent = within(dialog).getByLabelText('Requests at once');
    expect(concurrent).toHaveAttribute('aria-invalid', 'true');
    expect(concurrent).toHaveAccessibleDescription(/whole number from 1 to 1,000/);
    expect(concurrent, 'focus goes to the field in error').toHaveFocus();
    expect(backend.callsOf('llmConfig:addApiKey'), 'nothing was sent').toEqual([]);

    await user.clear(concurrent);
    await user.type(within(dialog).getByLabelText('Requests per minute'), '50');
    backend.rejectNext('llmConfig:addApiKey', { code: 'validation', message: 'rpmLimit: too many', issues: [{ path: 'rpmLimit', code: 'too_large', params: { max: 100_000 }, message: 'more than the backend allows' }] });
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    expect(await within(dialog).findByTestId('add-key-rpm-error')).toHaveTextContent('At most 100,000.');
    expect(within(dialog).getByLabelText('Requests per minute')).toHaveFocus();
  });

  it('edits a key in one dialog: label, weight, limits and quota group in one write; focus goes back to the row', async () => {
    backend.add('openai', 'sk-limits-0001', { label: 'capped', rpmLimit: 60, maxConcurrent: 2 });
    const user = renderSection();
    const open = await screen.findByRole('button', { name: 'Edit capped' });
    expect(within(row('capped')).getByTestId('key-limits')).toHaveTextContent('Your limits: 60/min · 2 at once');
    await user.click(open);
    const dialog = screen.getByRole('dialog', { name: 'Edit capped' });
    const label = within(dialog).getByLabelText(/Label/);
    expect(label, 'the dialog opens on the label').toHaveFocus();
    expect(label, 'the stored values are filled in').toHaveValue('capped');
    expect(within(dialog).getByLabelText('Weight')).toHaveValue('1');
    expect(within(dialog).getByLabelText('Requests per minute')).toHaveValue('60');
    expect(within(dialog).getByLabelText('Requests at once')).toHaveValue('2');
    expect(within(dialog).getByLabelText(/Replace the key/), 'the secret is not shown, only replaced').toHaveValue('');
    expect(within(dialog).getByLabelText(/Replace the key/)).toHaveAccessibleDescription(/Leave empty to keep sk-…0001/);

    await user.clear(label);
    await user.type(label, 'Production');
    await user.clear(within(dialog).getByLabelText('Weight'));
    await user.type(within(dialog).getByLabelText('Weight'), '5');
    await user.clear(within(dialog).getByLabelText('Requests per minute'));
    await user.clear(within(dialog).getByLabelText('Requests at once'));
    await user.type(within(dialog).getByLabelText('Requests at once'), '3');
    await user.type(within(dialog).getByLabelText(/Quota group/), ' org-1 {Enter}');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateApiKey'), 'one write, only what changed; both limits replaced').toEqual([
      { id: 'key-1', label: 'Production', weight: 5, limits: { maxConcurrent: 3 }, quotaGroup: 'org-1' },
    ]);
    expect(backend.keys()[0]).toMatchObject({ label: 'Production', weight: 5, rpmLimit: null, maxConcurrent: 3, quotaGroup: 'org-1' });
    expect(within(row('Production')).getByTestId('key-limits')).toHaveTextContent('Your limits: 3 at once');
    expect(screen.getByTestId('pool-announcement')).toHaveTextContent('Production saved.');
    await waitFor(() => expect(screen.getByRole('button', { name: 'Edit Production' })).toHaveFocus());
  });

  it('replaces a key’s secret through the edit dialog, keeps no copy of it, and shows a refusal at its field', async () => {
    backend.add('openai', 'sk-other-0002', { label: 'other' });
    backend.add('openai', 'sk-old-0001', { label: 'old' });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit old' }));
    let dialog = screen.getByRole('dialog', { name: 'Edit old' });
    const secret = within(dialog).getByLabelText(/Replace the key/);
    expect(secret, 'typed into a password field').toHaveAttribute('type', 'password');
    await user.type(secret, 'sk-other-0002');
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByTestId('edit-key-apikey-error'), 'a secret another key holds').toHaveTextContent('already in the provider’s pool');
    expect(secret).toHaveFocus();
    await user.keyboard('{Escape}');
    expect(backend.keys()[1], 'Escape saves nothing').toMatchObject({ apiKeyPreview: 'sk-…0001' });

    await user.click(screen.getByRole('button', { name: 'Edit old' }));
    dialog = screen.getByRole('dialog', { name: 'Edit old' });
    expect(within(dialog).getByLabelText(/Replace the key/), 'the form starts again from the stored key').toHaveValue('');
    await user.type(within(dialog).getByLabelText(/Replace the key/), SECRET);
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateApiKey').at(-1), 'only the secret').toEqual({ id: 'key-2', apiKey: SECRET });
    expect(within(row('old')).getByTestId('key-preview')).toHaveTextContent('sk-…9f3a');
    expect(document.body.innerHTML, 'the full key is nowhere in the page').not.toContain('AAAAAAAAAAAA');
  });

  it('closes the edit dialog without a write when nothing changed, and refuses a limit at its field', async () => {
    backend.add('openai', 'sk-limits-0001', { label: 'capped', rpmLimit: 60 });
    const user = renderSection();
    await user.click(await screen.findByRole('button', { name: 'Edit capped' }));
    let dialog = screen.getByRole('dialog', { name: 'Edit capped' });
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:updateApiKey'), 'nothing changed, nothing sent').toEqual([]);

    await user.click(screen.getByRole('button', { name: 'Edit capped' }));
    dialog = screen.getByRole('dialog', { name: 'Edit capped' });
    await user.type(within(dialog).getByLabelText('Requests at once'), '5');
    backend.rejectNext('llmConfig:updateApiKey', { code: 'validation', message: 'limits.maxConcurrent', issues: [{ path: 'limits.maxConcurrent', code: 'too_large', params: { max: 1_000 }, message: 'refused here' }] });
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(await within(dialog).findByTestId('edit-key-concurrent-error')).toHaveTextContent('At most 1,000.');
    expect(within(dialog).getByLabelText('Requests at once')).toHaveFocus();
    await user.clear(within(dialog).getByLabelText(/Quota group/));
    await user.type(within(dialog).getByLabelText(/Quota group/), 'g'.repeat(65));
    await user.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(within(dialog).getByLabelText(/Quota group/), 'the UI checks the bound first').toHaveAccessibleDescription(/at most 64 characters/);
  });

  it('asks before turning back on a key the provider refused, offers a test, and turns it on once accepted', async () => {
    const key = backend.add('openai', 'sk-revoked-0001', { label: 'revoked', enabled: false, disabledReason: 'HTTP 401', disabledAt: backend.now() - 60_000 });
    backend.setKeyTest(key.id, { ok: false, status: 401, problem: { kind: 'refused' }, message: 'Incorrect API key provided', latencyMs: 30 });
    const user = renderSection();
    await user.click(await screen.findByRole('switch', { name: 'Use revoked' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Turn revoked back on?' });
    expect(dialog).toHaveAccessibleDescription(/refused this key \(401\) at .*it may have been revoked/);
    expect(backend.callsOf('llmConfig:toggleApiKey'), 'nothing is switched before the user says').toEqual([]);
    const test = within(dialog).getByRole('button', { name: 'Test the key' });
    expect(test, 'testing first is the way offered').toHaveFocus();
    await user.click(test);
    expect(await within(dialog).findByText(/^Still refused: The provider refused \(HTTP 401\)\. .*Incorrect API key provided/)).toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Turn on anyway' }), 'the user may still turn it on').toBeInTheDocument();

    backend.setKeyTest(key.id, { ok: true, status: 200, problem: null, message: 'OK', latencyMs: 30 });
    await user.click(within(dialog).getByRole('button', { name: 'Test the key' }));
    expect(await within(dialog).findByText('The provider accepts the key again.')).toBeInTheDocument();
    const on = within(dialog).getByRole('button', { name: 'Turn on' });
    await waitFor(() => expect(on, 'the way on takes the focus').toHaveFocus());
    await user.click(on);
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:toggleApiKey')).toEqual([{ id: key.id, enabled: true }]);
    expect(await within(row('revoked')).findByRole('switch', { name: 'Use revoked' })).toHaveAttribute('aria-checked', 'true');
  });

  it('asks the same before a bulk Enable turns on keys the provider refused, and tests them first', async () => {
    const good = backend.add('openai', 'sk-revoked-0001', { label: 'came back', enabled: false, disabledReason: 'HTTP 401', disabledAt: backend.now() - 60_000 });
    const dead = backend.add('openai', 'sk-revoked-0002', { label: 'still dead', enabled: false, disabledReason: 'HTTP 401', disabledAt: backend.now() - 60_000 });
    const off = backend.add('openai', 'sk-off-0003', { label: 'by hand', enabled: false });
    backend.setKeyTest(good.id, { ok: true, status: 200, problem: null, message: 'OK', latencyMs: 30 });
    backend.setKeyTest(dead.id, { ok: false, status: 401, problem: { kind: 'refused' }, message: 'Incorrect API key provided', latencyMs: 30 });
    const user = renderSection();
    await user.click(await screen.findByRole('checkbox', { name: 'Select all 3 keys shown' }));
    await user.click(screen.getByRole('button', { name: 'Enable' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Turn on 2 keys the provider refused?' });
    expect(dialog).toHaveAccessibleDescription(/refused 2 of the 3 selected keys \(401 or 403\)/);
    expect(backend.callsOf('llmConfig:updateApiKeys'), 'nothing is switched before the user says').toEqual([]);
    const test = within(dialog).getByRole('button', { name: 'Test the 2' });
    expect(test, 'testing first is the way offered').toHaveFocus();
    await user.click(test);
    expect(await within(dialog).findByText('Accepted now: 1; still refused: 1.')).toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Turn on 2, leave the refused off' }));
    await waitFor(() => expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument());
    const [call] = backend.callsOf('llmConfig:updateApiKeys') as { ids: string[] }[];
    expect([...call.ids].sort(), 'the accepted and the one switched off by hand').toEqual([good.id, off.id].sort());
  });

  it('turns a key switched off by hand back on without asking', async () => {
    backend.add('openai', 'sk-off-0001', { label: 'off', enabled: false });
    const user = renderSection();
    await user.click(await screen.findByRole('switch', { name: 'Use off' }));
    await waitFor(() => expect(backend.callsOf('llmConfig:toggleApiKey')).toEqual([{ id: 'key-1', enabled: true }]));
    expect(screen.queryByRole('alertdialog')).not.toBeInTheDocument();
  });

  it('says when a key was last used after a restart, from the ledger', async () => {
    const key = backend.add('openai', 'sk-used-0001', { label: 'used' });
    backend.usage.setAttempts([attempt(backend.now() - 3 * 3_600_000, 'openai', key.id)]);
    renderSection();
    await screen.findByText('used');
    await waitFor(() => expect(within(row('used')).getByTestId('key-usage')).toHaveTextContent('Last used 3 hours ago'));
    expect(within(row('used')).getByTestId('key-today')).toHaveTextContent(/Today: [01] requests?/);
  });

  it('says that a local server needs no key, instead of asking for one', async () => {
    backend = createFakeBackend(undefined, { providers: [provider('local', 'Local', { baseUrl: 'http://127.0.0.1:11434/v1' })] });
    renderSection();
    expect(await screen.findByTestId('pool-fallback')).toHaveTextContent('No key needed: while the pool is empty, requests to this server go without one');
    expect(screen.getByTestId('provider-key')).toHaveTextContent('None needed');
  });

  it('cuts a long label to its column and gives the whole of it in a tooltip', async () => {
    const long = 'A very long label for the production key of the team that shares it with the night shift';
    backend.add('openai', 'sk-long-0001', { label: long });
    renderSection();
    const label = within(await screen.findByTestId('key-row')).getByTestId('key-label');
    expect(label).toHaveAttribute('title', long);
  });

  it('takes a $NAME reference in plain text, with a hint', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    expect(within(dialog).getByLabelText('API key')).toHaveAccessibleDescription(/write \$NAME/);
    await user.type(within(dialog).getByLabelText('API key'), '$OPENAI_TEAM');
    expect(within(dialog).getByLabelText('API key')).toHaveAttribute('type', 'text');
    expect(within(dialog).getByLabelText('API key')).toHaveAccessibleDescription('Read from the environment variable OPENAI_TEAM when used.');
  });

  it('keeps focus inside a dialog and closes it with Escape', async () => {
    const user = renderSection();
    const dialog = await openAdd(user);
    const buttons = within(dialog).getAllByRole('button');
    buttons[buttons.length - 1].focus();
    await user.tab();
    expect(within(dialog).getByLabelText('API key'), 'Tab from the last control wraps to the first').toHaveFocus();
    await user.tab({ shift: true });
    expect(buttons[buttons.length - 1], 'Shift+Tab wraps back').toHaveFocus();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).not.toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Add key' })).toHaveFocus());
  });

  it('edits a weight in place: Enter saves, an invalid one is not sent, Escape reverts', async () => {
    backend.add('openai', 'sk-weight-0001', { label: 'w' });
    const user = renderSection();
    const weight = await screen.findByRole('textbox', { name: 'Weight of w' });
    await user.clear(weight);
    await user.type(weight, '0{Enter}');
    expect(weight).toHaveAccessibleDescription(/whole number from 1 to 100/);
    expect(backend.callsOf('llmConfig:updateApiKey')).toEqual([]);

    await user.keyboard('{Escape}');
    expect(weight, 'Escape puts the stored weight back').toHaveValue('1');

    await user.clear(weight);
    await user.type(weight, '5{Enter}');
    await waitFor(() => expect(backend.callsOf('llmConfig:updateApiKey')).toEqual([{ id: 'key-1', weight: 5 }]));
    await waitFor(() => expect(backend.keys()[0].weight).toBe(5));
    expect(weight).toHaveValue('5');
    expect(screen.getByTestId('key-weight-status'), 'a saved weight says so where it is seen').toHaveTextContent('Saved.');
  });

  it('says a weight out of range once: at the field, the error without the hint; in the table, the range', async () => {
    backend.add('openai', 'sk-weight-0002', { label: 'w2' });
    const user = renderSection();
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-range-0001');
    await user.clear(within(dialog).getByLabelText('Weight'));
    await user.type(within(dialog).getByLabelText('Weight'), '0');
    await user.click(within(dialog).getByRole('button', { name: 'Add key' }));
    const field = within(dialog).getByLabelText('Weight');
    await waitFor(() => expect(field).toHaveAttribute('aria-invalid', 'true'));
    expect(field).not.toHaveAccessibleDescription(/share of new chats/);
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));

    const weight = await screen.findByRole('textbox', { name: 'Weight of w2' });
    await user.clear(weight);
    await user.type(weight, '0{Enter}');
    const error = await within(row('w2')).findByTestId('key-weight-error');
    expect(within(error).getByText('1–100'), 'seen: the range, which fits the column').toHaveAttribute('aria-hidden', 'true');
    expect(weight, 'read: the whole sentence').toHaveAccessibleDescription('The weight is a whole number from 1 to 100.');
  });

  it('shows a weight rejected by the backend at the weight', async () => {
    backend.add('openai', 'sk-weight-0001', { label: 'w' });
    backend.rejectNext('llmConfig:updateApiKey', { code: 'validation', message: 'weight', issues: [{ path: 'weight', code: 'too_small', params: { min: 1 }, message: 'lower than 1' }] });
    const user = renderSection();
    const weight = await screen.findByRole('textbox', { name: 'Weight of w' });
    await user.clear(weight);
    await user.type(weight, '9{Enter}');
    expect(await within(row('w')).findByTestId('key-weight-error')).toHaveTextContent('At least 1.');
  });

  it('switches a key off and on', async () => {
    backend.add('openai', 'sk-toggle-0001', { label: 't' });
    const user = renderSection();
    const toggle = await screen.findByRole('switch', { name: 'Use t' });
    await user.click(toggle);
    await waitFor(() => expect(within(row('t')).getByTestId('key-state')).toHaveTextContent('Off'));
    expect(toggle).toHaveAttribute('aria-checked', 'false');
    expect(backend.callsOf('llmConfig:toggleApiKey')).toEqual([{ id: 'key-1', enabled: false }]);
    await user.click(toggle);
    await waitFor(() => expect(within(row('t')).getByTestId('key-state')).toHaveTextContent('Active'));
  });

  it('deletes only after a confirmation that says it cannot be undone', async () => {
    backend.add('openai', 'sk-delete-0001', { label: 'doomed' });
    backend.add('openai', 'sk-keep-0002', { label: 'kept', sortOrder: 1 });
    const user = renderSection();
    const del = await screen.findByRole('button', { name: 'Delete doomed' });
    await user.click(del);
    const confirm = screen.getByRole('alertdialog', { name: 'Delete this key?' });
    expect(confirm).toHaveAccessibleDescription(/cannot be undone/);
    expect(within(confirm).getByRole('button', { name: 'Cancel' }), 'the safe choice has the focus').toHaveFocus();
    await user.click(within(confirm).getByRole('button', { name: 'Cancel' }));
    expect(backend.callsOf('llmConfig:deleteApiKey')).toEqual([]);
    await waitFor(() => expect(del, 'focus returns to the row').toHaveFocus());

    await user.click(del);
    await user.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete key' }));
    await waitFor(() => expect(screen.queryByText('doomed')).not.toBeInTheDocument());
    expect(backend.callsOf('llmConfig:deleteApiKey')).toEqual([{ id: 'key-1' }]);
    expect(screen.getByText('kept')).toBeInTheDocument();
  });

  it('reorders with the keyboard and keeps focus on the moved key', async () => {
    backend.add('openai', 'sk-a-0001', { label: 'alpha', sortOrder: 0 });
    backend.add('openai', 'sk-b-0002', { label: 'beta', sortOrder: 1 });
    backend.add('openai', 'sk-c-0003', { label: 'gamma', sortOrder: 2 });
    const user = renderSection();
    const handle = await screen.findByRole('button', { name: 'Move alpha' });
    expect(handle).toHaveAccessibleDescription(/arrow keys/);
    handle.focus();
    await user.keyboard('{ArrowDown}');
    await waitFor(() => expect(rows().map((r) => within(r).getByTestId('key-label').textContent)).toEqual(['beta', 'alpha', 'gamma']));
    expect(backend.callsOf('llmConfig:reorderApiKeys')).toEqual([{ providerId: 'openai', ids: ['key-2', 'key-1', 'key-3'] }]);
    expect(screen.getByRole('button', { name: 'Move alpha' })).toHaveFocus();
    await waitFor(() => expect(screen.getByTestId('pool-announcement')).toHaveTextContent('alpha moved to position 2 of 3.'));

    await user.keyboard('{End}');
    await waitFor(() => expect(backend.keys().map((k) => k.label)).toEqual(['beta', 'gamma', 'alpha']));
  });

  it('leaves focus where the user put it when the list reloads after a reorder', async () => {
    backend.add('openai', 'sk-a-0001', { label: 'alpha', sortOrder: 0 });
    backend.add('openai', 'sk-b-0002', { label: 'beta', sortOrder: 1 });
    const user = renderSection();
    (await screen.findByRole('button', { name: 'Move alpha' })).focus();
    await user.keyboard('{ArrowDown}');
    await waitFor(() => expect(backend.keys().map((k) => k.label)).toEqual(['beta', 'alpha']));
    const elsewhere = screen.getByRole('button', { name: 'Move beta' });
    elsewhere.focus();

    // Counted from here: the reorder itself shows its answer and reads nothing.
    const loaded = backend.callsOf('llmConfig:getApiKeys').length;
    await act(async () => backend.emit('openai'));
    await waitFor(() => expect(backend.callsOf('llmConfig:getApiKeys').length, 'the list reloaded').toBeGreaterThan(loaded));
    expect(elsewhere, 'the moved key’s handle does not take focus back').toHaveFocus();
  });

  it('counts a cooldown down by the backend clock and resets it', async () => {
    const key = backend.add('openai', 'sk-cool-0001', { label: 'hot' });
    const backendNow = Date.UTC(2026, 0, 15, 14, 10);
    backend.setLive(key.id, { state: 'cooling', coolingUntil: backendNow + 65_000, consecutiveErrors: 1 });
    const user = renderSection();
    const state = await screen.findByRole('timer');
    expect(state, 'the UI clock is years off; the backend clock counts').toHaveTextContent('Cooling, 1:05 left');
    await waitFor(() => expect(state).toHaveTextContent('Cooling, 1:04 left'), { timeout: 2500 });

    await user.click(screen.getByRole('button', { name: 'Reset the cooldown of hot' }));
    expect(backend.callsOf('llmConfig:resetCooldown')).toEqual([{ id: key.id }]);
    await waitFor(() => expect(within(row('hot')).getByTestId('key-state')).toHaveTextContent('Active'));
    expect(screen.queryByRole('button', { name: /Reset the cooldown/ })).not.toBeInTheDocument();
  });

  it('shows a key out of credit apart from cooling and disabled keys, with its next check', async () => {
    backend.setClock(new Date(2026, 0, 15, 14, 10).getTime());
    const broke = backend.add('openai', 'sk-broke-0001', { label: 'broke' });
    const hot = backend.add('openai', 'sk-hot-0002', { label: 'hot', sortOrder: 1 });
    backend.add('openai', 'sk-off-0003', { label: 'off', sortOrder: 2, enabled: false });
    backend.setLive(broke.id, {
      state: 'exhausted',
      nextProbeAt: new Date(2026, 0, 15, 14, 25).getTime(),
      lastError: { kind: 'quota_exhausted', status: 402, message: 'out of credit (HTTP 402)', at: new Date(2026, 0, 15, 14, 9).getTime() },
    });
    backend.setLive(hot.id, { state: 'cooling', coolingUntil: new Date(2026, 0, 15, 14, 11).getTime() });
    renderSection();
    await screen.findByText('broke');
    const state = within(row('broke')).getByTestId('key-state');
    expect(state).toHaveTextContent('Out of credit · next check at 14:25');
    expect(
      ['broke', 'hot', 'off'].map((name) => within(row(name)).getByTestId('key-state').dataset.state),
      'three states, three badges',
    ).toEqual(['exhausted', 'cooling', 'disabled']);
    expect(within(row('broke')).queryByRole('button', { name: /Reset the cooldown/ }), 'credit is not a cooldown').not.toBeInTheDocument();
    expect(within(row('broke')).getByRole('switch', { name: 'Use broke' }), 'the key stays on').toHaveAttribute('aria-checked', 'true');
  });

  it('shows in each row what the key has left, from the pool status, and requests in flight', async () => {
    const backendNow = Date.UTC(2026, 0, 15, 14, 10);
    const busy = backend.add('openai', 'sk-busy-0001', { label: 'busy' });
    backend.add('openai', 'sk-fresh-0002', { label: 'fresh', sortOrder: 1 });
    const off = backend.add('openai', 'sk-off-0003', { label: 'off', sortOrder: 2, enabled: false });
    const window = { remaining: 4, limit: 5, resetAt: backendNow + 45_000 };
    backend.setLive(busy.id, { budgets: [{ scope: 'gpt-4o-mini', requests: window, tokens: null, reservedRequests: 1, coolingUntil: null, usedUpUntil: null }], inFlight: 1 });
    backend.setLive(off.id, { budgets: [{ scope: 'gpt-4o-mini', requests: window, tokens: null, reservedRequests: 0, coolingUntil: null, usedUpUntil: null }] });
    renderSection();
    await screen.findByText('busy');
    expect(within(row('busy')).getByTestId('key-budget-line'), 'the request in flight is counted').toHaveTextContent('3/5 req · resets in 45 s');
    expect(within(row('busy')).getByTestId('key-in-flight')).toHaveTextContent('In flight: 1');
    expect(within(row('fresh')).queryByTestId('key-budget'), 'nothing known, nothing shown').not.toBeInTheDocument();
    expect(within(row('fresh')).queryByTestId('key-in-flight')).not.toBeInTheDocument();
    expect(within(row('off')).queryByTestId('key-budget'), 'a key switched off has no budget to speak of').not.toBeInTheDocument();
  });

  it('shows a key the backend disabled after a 401 with the reason and the time', async () => {
    const at = new Date(2026, 0, 15, 14, 2).getTime();
    backend.setClock(new Date(2026, 0, 15, 14, 30).getTime());
    backend.add('openai', 'sk-revoked-0001', { label: 'revoked', enabled: false, disabledReason: 'HTTP 401', disabledAt: at });
    renderSection();
    const state = await within(await screen.findByTestId('key-row')).findByTestId('key-state');
    expect(state).toHaveTextContent('Disabled after 401 at 14:02');
    expect(screen.getByRole('switch', { name: 'Use revoked' })).toHaveAttribute('aria-checked', 'false');
  });

  it('words a reason of the import’s own without brackets in brackets', async () => {
    const at = new Date(2026, 0, 15, 8, 19).getTime();
    backend.setClock(new Date(2026, 0, 15, 9, 0).getTime());
    backend.add('openai', 'sk-unchecked-0001', { label: 'kept', enabled: false, disabledReason: 'not checked (HTTP 404)', disabledAt: at });
    renderSection();
    const state = await within(await screen.findByTestId('key-row')).findByTestId('key-state');
    expect(state).toHaveTextContent(/^Disabled at 08:19: not checked \(HTTP 404\)$/);
  });

  it('follows llmConfig:changed for its provider, not for others', async () => {
    renderSection();
    await screen.findByTestId('pool-empty');
    const loads = () => backend.callsOf('llmConfig:getApiKeys').length;
    const before = loads();
    await act(async () => backend.emit('anthropic'));
    expect(loads(), 'another provider’s change does not reload this pool').toBe(before);

    backend.add('openai', 'sk-from-elsewhere-0001', { label: 'elsewhere' });
    await act(async () => backend.emit('openai'));
    expect(await screen.findByText('elsewhere'), 'a key written elsewhere shows up').toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('button', { name: /OpenAI/ })).toHaveTextContent('1'));
  });

  it('still shows a write when the event never comes', async () => {
    backend.stopEmitting();
    const user = renderSection();
    const dialog = await openAdd(user);
    await user.type(within(dialog).getByLabelText('API key'), 'sk-quiet-0001');
    await user.keyboard('{Enter}');
    expect(await screen.findByText('sk-…0001', {}, { timeout: 5000 })).toBeInTheDocument();
  }, 10_000);

  it('speaks the chosen language', async () => {
    backend.add('openai', 'sk-ja-0001', { label: 'ja' });
    renderSection('ja');
    expect(await screen.findByRole('heading', { name: 'API キープール' })).toBeInTheDocument();
    // The heading shows while the keys still load: wait for the key's row.
    expect(await screen.findByRole('switch', { name: 'ja を使う' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'キーを追加' })).toBeInTheDocument();
  });
});

/*
 * Pools whose keys share quotas (Gemini's projects, OpenAI's organizations): a key's quota group
 * set when it is added (alone or pasted), shown in its row and filtered by, and a model resting on
 * its own: used up for the day until the provider's day ends, in the user's time and language, or
 * cooling after its per-minute quota.
 */
const labels = () => rows().map((r) => within(r).getByTestId('key-label').textContent);

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
