import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ProvidersSection } = await import('../../../providers/ProvidersSection');

function renderSection() {
  const user = userEvent.setup();
  render(
    <I18nProvider initial="en">
      <ProvidersSection />
    </I18nProvider>,
  );
  return user;
}

/** A CSV with a header, two keys repeated, one already in the pool and a line with no key. */
const CSV = [
  'label,key,note',
  'a,sk-import-000000001,first',
  'b,"sk-import-000000002",second',
  'c,sk-import-000000001,again',
  'd,sk-in-pool-00000009,old',
  'e,notakeybutlongenoughvalue,broken',
  '',
  '# sk-import-000000003 in a comment',
].join('\n');

async function openImport(user: ReturnType<typeof userEvent.setup>) {
  await user.click(await screen.findByRole('button', { name: 'Import keys' }));
  return screen.getByRole('dialog', { name: 'Import keys' });
}

async function paste(user: ReturnType<typeof userEvent.setup>, dialog: HTMLElement, text: string) {
  await user.click(within(dialog).getByLabelText('Keys, or any text holding them'));
  await user.paste(text);
  await user.click(within(dialog).getByRole('button', { name: 'Find keys' }));
}

const importId = () => backend.callsOf('llmConfig:startKeyImport')[0].importId;

describe('importing keys', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('previews what the text holds before saving anything: new, repeated, already in the pool, unread lines', async () => {
    backend.add('openai', 'sk-in-pool-00000009', { label: 'old' });
    const user = renderSection();
    const dialog = await openImport(user);
    await paste(user, dialog, CSV);
    const preview = await within(dialog).findByTestId('import-preview');
    expect(within(preview).getByTestId('import-found'), 'every key found, repeats included').toHaveTextContent('Found: 5');
    expect(within(preview).getByTestId('import-new')).toHaveTextContent('New: 3');
    expect(within(preview).getByTestId('import-dup-paste')).toHaveTextContent('Repeated in the text: 1');
    expect(within(preview).getByTestId('import-dup-pool')).toHaveTextContent('Already in the pool: 1');
    expect(within(preview).getByTestId('import-unrecognised'), 'the line number is named').toHaveTextContent('Lines not read as keys: 1 (Line 6)');
    expect(
      within(preview)
        .getAllByTestId('import-new-key')
        .map((row) => row.querySelector('code')?.textContent),
      'only previews, never the keys',
    ).toEqual(['sk-…0001', 'sk-…0002', 'sk-…0003']);
    expect(backend.callsOf('llmConfig:startKeyImport'), 'nothing saved before the user says so').toEqual([]);
    expect(backend.keys(), 'the pool is as it was').toHaveLength(1);
    expect(within(dialog).getByRole('checkbox', { name: 'Validate keys' }), 'validation is on by default').toBeChecked();
    expect(within(dialog).getByRole('checkbox', { name: /keep rejected keys/ })).not.toBeChecked();

    await user.type(within(dialog).getByLabelText('Keys, or any text holding them'), '\nsk-import-000000004');
    expect(within(dialog).queryByTestId('import-preview'), 'a changed text is found again').not.toBeInTheDocument();
    expect(within(dialog).getByRole('button', { name: 'Find keys' })).toBeInTheDocument();
  });

  it('reads a chosen file', async () => {
    const user = renderSection();
    const dialog = await openImport(user);
    const file = new File(['sk-file-0000000000000001\nsk-file-0000000000000002\n'], 'keys.txt', { type: 'text/plain' });
    await user.upload(within(dialog).getByLabelText('Choose a file (.txt, .csv, .json)'), file);
    await waitFor(() => expect(within(dialog).getByLabelText('Keys, or any text holding them')).toHaveValue('sk-file-0000000000000001\nsk-file-0000000000000002\n'));
    expect(within(dialog).getByLabelText('Keys, or any text holding them'), 'says which file it read').toHaveAccessibleDescription(/Read keys\.txt\./);
    await user.click(within(dialog).getByRole('button', { name: 'Find keys' }));
    expect(await within(dialog).findByTestId('import-new')).toHaveTextContent('New: 2');
  });

  it('takes only keys of the provider’s shape from a .env, and lists each with a Remove before anything is sent', async () => {
    const user = renderSection();
    const dialog = await openImport(user);
    expect(within(dialog).getByRole('radio', { name: 'Keys of this provider’s shape (sk-…)' }), 'by shape unless the user says otherwise').toBeChecked();
    const env = [
      'OPENAI_API_KEY=sk-proj-0000000000000001',
      'ANTHROPIC_API_KEY=sk-ant-api03-000000000000002',
      'GEMINI_API_KEY=AIzaSyA-0000000000000003',
      'GITHUB_TOKEN=ghp_00000000000000000000004',
      'OPENAI_FALLBACK=sk-fallback-000000000005',
      'OPENAI_THIRD=sk-third-0000000000000006',
    ].join('\n');
    await paste(user, dialog, env);
    const preview = await within(dialog).findByTestId('import-preview');
    expect(within(preview).getByTestId('import-unrecognised'), 'the other secrets are named by line only').toHaveTextContent('Lines not read as keys: 3 (Lines 2, 3, 4)');
    const keys = () => within(preview).getAllByTestId('import-new-key').map((row) => row.querySelector('code')?.textContent);
    expect(keys(), 'the OpenAI keys, masked').toEqual(['sk-…0001', 'sk-…0005', 'sk-…0006']);
    expect(preview, 'no secret in the page').not.toHaveTextContent('sk-proj-0000000000000001');

    await user.click(within(preview).getByRole('button', { name: 'Remove sk-…0005' }));
    expect(keys(), 'removed from the list').toEqual(['sk-…0001', 'sk-…0006']);
    expect(within(preview).getByRole('button', { name: 'Remove sk-…0006' }), 'the focus goes to the next row’s Remove').toHaveFocus();
    expect(within(preview).getByTestId('import-left-out')).toHaveTextContent('1 key left out: it is not sent.');
    await user.keyboard('{Enter}');
    expect(within(preview).getByRole('button', { name: 'Remove sk-…0001' }), 'at the end, the previous one').toHaveFocus();
    await user.click(within(preview).getByRole('button', { name: 'Put back' }));
    expect(keys(), 'put back').toEqual(['sk-…0001', 'sk-…0005', 'sk-…0006']);
    await user.click(within(preview).getByRole('button', { name: 'Remove sk-…0005' }));

    expect(backend.callsOf('llmConfig:startKeyImport'), 'nothing sent before the user says so').toEqual([]);
    await user.click(within(dialog).getByRole('button', { name: 'Import 2 keys' }));
    expect(backend.callsOf('llmConfig:startKeyImport')[0], 'the removed key is left out by its index').toMatchObject({ leftOut: [1] });
    await act(async () => backend.advanceImport(importId(), 2));
    await within(dialog).findByTestId('import-summary');
    expect(backend.keys().map((k) => k.apiKeyPreview), 'only the keys kept are saved').toEqual(['sk-…0001', 'sk-…0006']);
  });

  it('takes tokens of another shape only after “One key per line” is chosen', async () => {
    const user = renderSection();
    const dialog = await openImport(user);
    const text = 'GROQ_API_KEY=gsk_0000000000000000000001\nGITHUB_TOKEN=ghp_00000000000000000000002';
    await paste(user, dialog, text);
    const field = within(dialog).getByLabelText('Keys, or any text holding them');
    await waitFor(() => expect(field).toHaveAccessibleDescription(/No key of this provider’s shape \(sk-…\) in the text\. If its keys look different, choose “One key per line”\./));
    expect(field, 'the text takes the focus to be fixed').toHaveFocus();
    expect(within(dialog).queryByTestId('import-preview'), 'nothing listed, nothing to send').not.toBeInTheDocument();

    await user.click(within(dialog).getByRole('radio', { name: 'One key per line, whatever its shape' }));
    expect(within(dialog).getByTestId('import-reading'), 'the choice says what it takes').toHaveAccessibleDescription(/Each line’s longest token is taken as a key/);
    await user.click(within(dialog).getByRole('button', { name: 'Find keys' }));
    const preview = await within(dialog).findByTestId('import-preview');
    expect(backend.callsOf('llmConfig:previewKeyImport').at(-1), 'read one per line, as asked').toMatchObject({ reading: 'one_per_line' });
    await user.click(within(preview).getByRole('button', { name: 'Remove ghp…0002' }));
    await user.click(within(dialog).getByRole('button', { name: 'Import 1 key' }));
    await act(async () => backend.advanceImport(importId(), 1));
    await within(dialog).findByTestId('import-summary');
    expect(backend.keys().map((k) => k.apiKeyPreview), 'the GitHub token was never sent nor saved').toEqual(['gsk…0001']);
  });

  it('checks the settings for all before starting, worded at their fields', async () => {
    const user = renderSection();
    const dialog = await openImport(user);
    await paste(user, dialog, 'sk-import-000000001');
    const weight = within(dialog).getByLabelText('Weight');
    await user.clear(weight);
    await user.type(weight, '0');
    await user.type(within(dialog).getByLabelText('Label prefix'), 'x'.repeat(95));
    await user.click(within(dialog).getByRole('button', { name: 'Import 1 key' }));
    expect(weight).toHaveAccessibleDescription(/The weight is a whole number from 1 to 100/);
    expect(within(dialog).getByLabelText('Label prefix')).toHaveAccessibleDescription(/A label prefix is at most 92 characters/);
    expect(backend.callsOf('llmConfig:startKeyImport'), 'nothing starts while a setting is wrong').toEqual([]);
  });

  it('follows the validation: a progress bar with counts per bucket, then a summary, and the new rows marked', async () => {
    backend.setImportVerdict((secret) => (secret.endsWith('2') ? 'invalid' : secret.endsWith('3') ? 'rateLimited' : 'valid'));
    const scrolled = vi.fn();
    Element.prototype.scrollIntoView = scrolled;
    const user = renderSection();
    const dialog = await openImport(user);
    await paste(user, dialog, 'sk-import-000000001\nsk-import-000000002\nsk-import-000000003\nsk-import-000000004');
    await user.type(within(dialog).getByLabelText('Label prefix'), 'batch-1');
    await user.type(within(dialog).getByLabelText(/^Quota group/), 'proj');
    await user.click(within(dialog).getByRole('button', { name: 'Import 4 keys' }));
    expect(backend.callsOf('llmConfig:startKeyImport'), 'the settings for all').toEqual([
      { importId: importId(), weight: 1, labelPrefix: 'batch-1', quotaGroup: 'proj', validate: true, keepRejectedDisabled: false },
    ]);
    const bar = await within(dialog).findByRole('progressbar', { name: 'Importing…' });
    expect(bar).toHaveAttribute('aria-valuemax', '4');
    expect(bar).toHaveAttribute('aria-valuenow', '0');

    await act(async () => backend.advanceImport(importId(), 2));
    await waitFor(() => expect(bar).toHaveAttribute('aria-valuenow', '2'));
    expect(bar).toHaveAttribute('aria-valuetext', '2 of 4 done');
    expect(within(dialog).getByTestId('import-valid')).toHaveTextContent('Valid: 1');
    expect(within(dialog).getByTestId('import-invalid')).toHaveTextContent('Invalid: 1');
    expect(within(dialog).getByTestId('import-added')).toHaveTextContent('Added: 1');

    await act(async () => backend.advanceImport(importId(), 2));
    const summary = await within(dialog).findByTestId('import-summary');
    expect(summary).toHaveTextContent('Import finished: 2 keys added.');
    expect(within(dialog).getByTestId('import-rate-limited')).toHaveTextContent('Rate-limited: 1');
    expect(within(dialog).getByRole('button', { name: 'Close' }), 'the summary’s Close takes focus').toHaveFocus();
    expect(backend.keys().map((k) => [k.label, k.quotaGroup, k.enabled]), 'exactly the valid keys, labelled, in the group').toEqual([
      ['batch-1 #1', 'proj', true],
      ['batch-1 #4', 'proj', true],
    ]);

    await user.click(within(dialog).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.getByTestId('pool-added')).toHaveTextContent('2 keys added.'));
    expect(
      screen.getAllByTestId('key-row').filter((r) => r.classList.contains('key-row--fresh')),
      'the new rows are marked',
    ).toHaveLength(2);
    expect(scrolled, 'and the first brought into view').toHaveBeenCalled();
  });

  it('keeps rejected keys switched off when asked, and imports without validating when told not to', async () => {
    backend.setImportVerdict((secret) => (secret.endsWith('2') ? 'invalid' : 'valid'));
    const user = renderSection();
    let dialog = await openImport(user);
    await paste(user, dialog, 'sk-import-000000001\nsk-import-000000002');
    await user.click(within(dialog).getByRole('checkbox', { name: /keep rejected keys/ }));
    await user.click(within(dialog).getByRole('button', { name: 'Import 2 keys' }));
    await act(async () => backend.advanceImport(importId(), 2));
    await within(dialog).findByTestId('import-summary');
    expect(backend.keys().map((k) => k.enabled), 'the invalid key is kept, off').toEqual([true, false]);
    await user.click(within(dialog).getByRole('button', { name: 'Close' }));

    dialog = await openImport(user);
    await paste(user, dialog, 'sk-import-000000005');
    await user.click(within(dialog).getByRole('checkbox', { name: 'Validate keys' }));
    await user.click(within(dialog).getByRole('button', { name: 'Import 1 key' }));
    expect(backend.callsOf('llmConfig:startKeyImport').at(-1), 'no validation asked').toMatchObject({ validate: false });
  });

  it('names the keys it refused, masked, with why, and adds them switched off when asked', async () => {
    backend.setImportVerdict((secret) => (secret.endsWith('2') || secret.endsWith('3') ? 'invalid' : 'valid'));
    const user = renderSection();
    const dialog = await openImport(user);
    await paste(user, dialog, 'sk-import-000000001\nsk-import-000000002\nsk-import-000000003');
    await user.click(within(dialog).getByRole('button', { name: 'Import 3 keys' }));
    const first = importId();
    await act(async () => backend.advanceImport(first, 3));
    await within(dialog).findByTestId('import-summary');

    const left = await within(dialog).findByTestId('import-left');
    expect(left).toHaveTextContent('2 keys were not added: the provider refused them as invalid.');
    expect(within(left).getAllByTestId('import-left-key').map((k) => k.textContent), 'masked, as the pool shows keys').toEqual(['sk-…0002', 'sk-…0003']);
    expect(left, 'no secret in the page').not.toHaveTextContent('sk-import-000000002');

    await user.click(within(left).getByRole('button', { name: 'Add them switched off' }));
    expect(backend.callsOf('llmConfig:startKeyImport').at(-1), 'checked again, kept off with their reason').toMatchObject({
      validate: true,
      keepRejectedDisabled: true,
    });
    const second = backend.callsOf('llmConfig:startKeyImport').at(-1)?.importId ?? '';
    expect(second, 'a new import of the refused keys alone').not.toBe(first);
    await act(async () => backend.advanceImport(second, 2));
    await waitFor(() => expect(backend.keys().map((k) => k.enabled)).toEqual([true, false, false]));
    expect(within(dialog).queryByTestId('import-left'), 'nothing is left out now').not.toBeInTheDocument();
  });

  it('cancels a running import: the keys already saved stay, and the summary says how many', async () => {
    const user = renderSection();
    const dialog = await openImport(user);
    await paste(user, dialog, Array.from({ length: 10 }, (_, i) => `sk-import-00000001${i}`).join('\n'));
    await user.click(within(dialog).getByRole('button', { name: 'Import 10 keys' }));
    await within(dialog).findByRole('progressbar');
    await act(async () => backend.advanceImport(importId(), 3));
    await user.keyboard('{Escape}');
    expect(screen.getByRole('dialog', { name: 'Import keys' }), 'Escape does not hide a running import').toBeInTheDocument();
    await user.click(within(dialog).getByRole('button', { name: 'Cancel import' }));
    expect(backend.callsOf('llmConfig:cancelKeyImport')).toEqual([{ importId: importId() }]);
    expect(await within(dialog).findByTestId('import-summary')).toHaveTextContent('Import cancelled: the 3 keys already saved stay.');
    expect(backend.keys(), 'what was saved stays').toHaveLength(3);
  });
});
