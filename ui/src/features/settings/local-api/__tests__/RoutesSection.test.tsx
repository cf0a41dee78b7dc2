import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../../i18n';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { LocalApiSection } = await import('../LocalApiSection');

async function renderRoutes(locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <LocalApiSection />
    </I18nProvider>,
  );
  const section = await screen.findByTestId('routes-section');
  await within(section).findByTestId('route-add');
  return { user, section };
}

/** Adds a route through the dialog, with the keyboard only. */
async function addRoute(user: ReturnType<typeof userEvent.setup>, section: HTMLElement, pattern: string, provider: string, model: string) {
  await user.click(within(section).getByRole('button', { name: 'Add route' }));
  const dialog = await screen.findByRole('dialog', { name: 'Add a route' });
  expect(within(dialog).getByRole('textbox', { name: 'Models asked for' }), 'the pattern has the focus').toHaveFocus();
  await user.keyboard(pattern);
  await user.selectOptions(within(dialog).getByRole('combobox', { name: 'Provider' }), provider);
  await user.type(within(dialog).getByRole('combobox', { name: 'Model it asks for' }), model);
  await user.keyboard('{Enter}');
  return dialog;
}

const rows = (section: HTMLElement) => within(section).queryAllByTestId('route-row');
const patterns = (section: HTMLElement) => rows(section).map((row) => within(row).getByTestId('route-pattern').textContent);

describe('Settings → Local API → Routes', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    localStorage.clear();
  });

  it('adds a route from the keyboard, saved at once and shown with where it goes', async () => {
    const { user, section } = await renderRoutes();
    expect(within(section).getByTestId('routes-empty')).toHaveTextContent('No routes yet');
    await addRoute(user, section, 'claude-*', 'OpenAI', 'gpt-4o');
    await waitFor(() => expect(screen.queryByRole('dialog')).not.toBeInTheDocument());
    expect(backend.callsOf('localApi:setRoutes')).toEqual([{ routes: [{ model: 'claude-*', provider: 'openai', toModel: 'gpt-4o' }] }]);
    const [row] = rows(section);
    expect(within(row).getByTestId('route-target')).toHaveTextContent('OpenAI / gpt-4o');
    expect(within(row).queryByTestId('route-state'), 'a provider with a key: nothing to warn of').not.toBeInTheDocument();
    expect(within(section).getByTestId('routes-announcement')).toHaveTextContent('Route claude-* added.');
    expect(within(section).getByRole('button', { name: 'Add route' }), 'focus goes back to what opened the dialog').toHaveFocus();
  });

  it('suggests the models the chosen provider lists, its models endpoint’s too', async () => {
    backend.setModels('anthropic', { models: ['claude-opus-4-1', 'claude-sonnet-4-5'] });
    const { user, section } = await renderRoutes();
    await user.click(within(section).getByRole('button', { name: 'Add route' }));
    const dialog = await screen.findByRole('dialog', { name: 'Add a route' });
    await user.selectOptions(within(dialog).getByRole('combobox', { name: 'Provider' }), 'Anthropic (no usable key)');
    const field = within(dialog).getByRole('combobox', { name: 'Model it asks for' });
    const options = () => [...(document.getElementById(field.getAttribute('list') ?? '')?.querySelectorAll('option') ?? [])].map((o) => o.value);
    await waitFor(() => expect(options(), 'its own list first, then what its endpoint lists, each once').toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1']));
    expect(backend.callsOf('llmConfig:listModels').at(-1), 'the backend’s kept list, not a new fetch each time').toEqual({ providerId: 'anthropic' });
  });

  it('refuses a bad pattern at its field, keeping the dialog and what was typed', async () => {
    const { user, section } = await renderRoutes();
    // `[[` types one `[`.
    const dialog = await addRoute(user, section, 'claude-[[a-z]', 'OpenAI', 'gpt-4o');
    const pattern = await within(dialog).findByRole('textbox', { name: 'Models asked for' });
    await waitFor(() => expect(pattern).toHaveAttribute('aria-invalid', 'true'));
    expect(pattern).toHaveAccessibleDescription(/\* stands for any run of characters and \? for one\. No spaces, brackets or braces\./);
    expect(pattern).toHaveValue('claude-[a-z]');
    expect(backend.localApiExtras.routes(), 'nothing saved').toEqual([]);
    expect(within(section).getByTestId('routes-problem')).toHaveTextContent('The routes were not saved');
  });

  it('says which routes cannot answer now: no usable key', async () => {
    const { user, section } = await renderRoutes();
    await addRoute(user, section, '*', 'Anthropic (no usable key)', 'claude-sonnet-4-5');
    const [row] = await waitFor(() => {
      const found = rows(section);
      expect(found).toHaveLength(1);
      return found;
    });
    expect(row).toHaveAttribute('data-state', 'noUsableKey');
    expect(within(row).getByTestId('route-state')).toHaveTextContent('No usable key');
  });

  it('moves routes up and down with the focus on the moved route, and deletes one', async () => {
    const { user, section } = await renderRoutes();
    await addRoute(user, section, 'a-*', 'OpenAI', 'gpt-4o');
    await waitFor(() => expect(rows(section)).toHaveLength(1));
    await addRoute(user, section, 'b-*', 'OpenAI', 'gpt-4o-mini');
    await waitFor(() => expect(rows(section)).toHaveLength(2));
    const first = rows(section)[0];
    expect(within(first).getByRole('button', { name: 'Move the route a-* up' }), 'the first cannot go up').toBeDisabled();

    await user.click(within(rows(section)[1]).getByRole('button', { name: 'Move the route b-* up' }));
    await waitFor(() => expect(patterns(section)).toEqual(['b-*', 'a-*']));
    expect(backend.localApiExtras.routes().map((r) => r.model), 'the first match wins: the order is saved').toEqual(['b-*', 'a-*']);
    await waitFor(() => expect(within(rows(section)[0]).getByRole('button', { name: 'Move the route b-* down' }), 'the focus moves with the route').toHaveFocus());
    expect(within(section).getByTestId('routes-announcement')).toHaveTextContent('Route b-* moved up, to place 1.');

    await user.keyboard('{Enter}');
    await waitFor(() => expect(patterns(section)).toEqual(['a-*', 'b-*']));

    await user.click(within(rows(section)[0]).getByRole('button', { name: 'Delete the route a-*' }));
    await waitFor(() => expect(patterns(section)).toEqual(['b-*']));
    await waitFor(() => expect(within(rows(section)[0]).getByRole('button', { name: 'Delete the route b-*' }), 'the focus stays in the list').toHaveFocus());
  });

  it('edits a route in place', async () => {
    const { user, section } = await renderRoutes();
    await addRoute(user, section, 'claude-*', 'OpenAI', 'gpt-4o');
    await waitFor(() => expect(rows(section)).toHaveLength(1));
    await user.click(within(rows(section)[0]).getByRole('button', { name: 'Edit the route claude-*' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit the route' });
    const model = within(dialog).getByRole('combobox', { name: 'Model it asks for' });
    expect(model).toHaveValue('gpt-4o');
    await user.clear(model);
    await user.type(model, 'gpt-4o-mini{Enter}');
    await waitFor(() => expect(within(rows(section)[0]).getByTestId('route-target')).toHaveTextContent('OpenAI / gpt-4o-mini'));
    expect(backend.localApiExtras.routes()).toEqual([{ model: 'claude-*', provider: 'openai', toModel: 'gpt-4o-mini' }]);
  });

  it('tries a route: the reply, or why no reply came', async () => {
    const { user, section } = await renderRoutes();
    await addRoute(user, section, 'claude-*', 'OpenAI', 'gpt-4o');
    await waitFor(() => expect(rows(section)).toHaveLength(1));
    await user.click(within(rows(section)[0]).getByRole('button', { name: 'Try the route claude-*' }));
    const tried = await within(section).findByTestId('route-tried');
    await waitFor(() => expect(tried).toHaveAttribute('data-outcome', 'answered'));
    expect(tried).toHaveTextContent('OpenAI answered as gpt-4o in 120 ms, with the key Key 1: “OK”');
    expect(tried, 'announced').toHaveAttribute('role', 'status');
    expect(backend.callsOf('localApi:testRoute')).toEqual([{ route: { model: 'claude-*', provider: 'openai', toModel: 'gpt-4o' } }]);

    backend.localApiExtras.setRouteTest('openai', { kind: 'failed', error: { kind: 'refused', status: 404, message: 'The model gpt-4o does not exist' } });
    await user.click(within(rows(section)[0]).getByRole('button', { name: 'Try the route claude-*' }));
    await waitFor(() => expect(within(section).getByTestId('route-tried')).toHaveAttribute('data-outcome', 'failed'));
    expect(within(section).getByTestId('route-tried')).toHaveTextContent(/^OpenAI did not answer as gpt-4o: .*404.*The model gpt-4o does not exist/);
  });

  it('speaks the UI’s language', async () => {
    const { section } = await renderRoutes('ja');
    expect(within(section).getByRole('heading', { name: 'ルート' })).toBeInTheDocument();
    expect(within(section).getByRole('button', { name: 'ルートを追加' })).toBeInTheDocument();
  });
});
