import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Locale } from '../../../i18n';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';
import committed from '../third-party.json';
import { packageCount, type ThirdParty } from '../thirdParty';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));

const { ThirdPartySoftware } = await import('../ThirdPartySoftware');

const data = committed as ThirdParty;
const total = packageCount(data.groups);

function renderList(props: { load?: () => Promise<ThirdParty> } = {}, locale: Locale = 'en') {
  const user = userEvent.setup();
  render(
    <I18nProvider initial={locale}>
      <ThirdPartySoftware {...props} />
    </I18nProvider>,
  );
  return user;
}

const filter = () => screen.findByRole('searchbox', { name: 'Filter by name or licence' });
const groupOf = (licence: string) => {
  const group = screen.getAllByTestId('licence-group').find((g) => g.querySelector('summary .third-party__licence')?.textContent === licence);
  if (!group) throw new Error(`no group ${licence}`);
  return group as HTMLDetailsElement;
};

describe('Settings → About: the third-party software Keypool ships', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('loads the committed list on its own and counts every package in it', async () => {
    renderList();
    expect(screen.getByTestId('third-party-loading'), 'the list is a chunk of its own, loaded after the page shows').toHaveTextContent('Loading the list…');
    await filter();
    expect(total, 'the committed list holds the crates and the npm packages').toBeGreaterThan(300);
    expect(screen.getByRole('status'), 'the total is said').toHaveTextContent(`${total.toLocaleString('en')} packages`);
    expect(screen.getAllByTestId('licence-group'), 'one disclosure per licence expression').toHaveLength(data.groups.length);
    expect(screen.getByRole('heading', { level: 3, name: 'Third-party software' }), 'the list has a heading of its own under About').toBeInTheDocument();
  });

  it('shows each package with its version and kind under its licence, once the group opens', async () => {
    const user = renderList();
    await filter();
    const tauri = data.groups.flatMap((g) => g.packages.map((p) => ({ ...p, licence: g.licence }))).find((p) => p.kind === 'crate' && p.name === 'tauri');
    expect(tauri, 'tauri is in the app binary, so it is listed').toBeDefined();
    const group = groupOf(tauri?.licence ?? '');
    expect(within(group).queryAllByTestId('third-party-package'), 'a closed group’s rows are not on the page yet').toHaveLength(0);
    await user.click(group.querySelector('summary') as HTMLElement);
    const row = within(group)
      .getAllByTestId('third-party-package')
      .find((li) => li.querySelector('a')?.textContent === 'tauri');
    expect(row, 'the row names the version and that it is a Rust crate').toHaveTextContent(`tauri ${tauri?.version} Rust crate`);
    expect(row?.querySelector('a'), 'and links the project').toHaveAttribute('href', tauri?.url);
    const mit = groupOf('MIT');
    await user.click(mit.querySelector('summary') as HTMLElement);
    const react = within(mit)
      .getAllByTestId('third-party-package')
      .find((li) => li.querySelector('a')?.textContent === 'react');
    expect(react, 'an npm dependency is listed too').toHaveTextContent(/^react \d+\.\d+\.\d+ npm package$/);
  });

  it('filters by package name, opening the groups that match and saying how many', async () => {
    const user = renderList();
    await user.click(await filter());
    await user.paste('react-markdown');
    expect(screen.getByRole('status'), 'one package matches').toHaveTextContent('1 package matches');
    const groups = screen.getAllByTestId('licence-group');
    expect(groups, 'only its group is left').toHaveLength(1);
    expect((groups[0] as HTMLDetailsElement).open, 'a group that matched is open, so the match is visible').toBe(true);
    expect(within(groups[0]).getAllByTestId('third-party-package').map((li) => li.textContent), 'and holds only the match').toEqual([
      expect.stringMatching(/^react-markdown /),
    ]);
  });

  it('filters by licence, keeping the whole group, and clears with Escape', async () => {
    const user = renderList();
    const input = await filter();
    await user.click(input);
    await user.paste('mozilla');
    const mpl = data.groups.filter((g) => g.licence.includes('MPL-2.0'));
    expect(mpl.length, 'some shipped crates are under MPL-2.0').toBeGreaterThan(0);
    expect(screen.getAllByTestId('licence-group').map((g) => g.querySelector('.third-party__licence')?.textContent), 'a licence’s full name finds its groups').toEqual(mpl.map((g) => g.licence));
    expect(screen.getByRole('status')).toHaveTextContent(`${packageCount(mpl)} package`);

    await user.keyboard('{Escape}');
    expect(input, 'Escape empties the filter').toHaveValue('');
    expect(screen.getAllByTestId('licence-group'), 'and everything is back').toHaveLength(data.groups.length);
    expect(screen.getAllByTestId('licence-group').some((g) => (g as HTMLDetailsElement).open), 'closed again, as before filtering').toBe(false);
  });

  it('says so when nothing matches', async () => {
    const user = renderList();
    await user.click(await filter());
    await user.paste('no-such-package-xyz');
    expect(screen.getByRole('status'), 'an empty result is said, with what was looked for').toHaveTextContent('No package or licence matches “no-such-package-xyz”.');
    expect(screen.queryAllByTestId('licence-group'), 'and no group is shown').toHaveLength(0);
  });

  it('shows a licence’s standard text once its disclosure opens', async () => {
    const user = renderList();
    await filter();
    const group = groupOf('MIT');
    await user.click(within(group).getByText('MIT', { selector: 'summary .third-party__licence' }));
    expect(group.open, 'the group opens from its summary').toBe(true);
    const text = within(group).getByTestId('licence-text') as HTMLDetailsElement;
    expect(text.querySelector('pre'), 'the text is not on the page until asked for').toBeNull();
    await user.click(within(text).getByText('Text of the MIT License'));
    await waitFor(() => expect(text.querySelector('pre'), 'the MIT text itself').toHaveTextContent('Permission is hereby granted, free of charge'));
  });

  it('opens a project in the system browser, and links an exception to its SPDX page', async () => {
    const user = renderList();
    await user.click(await filter());
    await user.paste('LLVM');
    const group = screen.getAllByTestId('licence-group')[0];
    expect(within(group).getByRole('link', { name: 'LLVM-exception (SPDX page)' }), 'an exception has no text in the list, so it links to SPDX').toHaveAttribute(
      'href',
      'https://spdx.org/licenses/LLVM-exception.html',
    );
    const first = within(group).getAllByTestId('third-party-package')[0];
    const link = within(first).getByRole('link');
    await user.click(link);
    await waitFor(() => expect(backend.opened(), 'the click goes to the browser, never this window').toEqual([link.getAttribute('href')]));
  });

  it('says the list could not be loaded when its chunk fails', async () => {
    renderList({ load: () => Promise.reject(new Error('chunk failed')) });
    expect(await screen.findByRole('alert'), 'a failed load is said, not an empty list').toHaveTextContent('The list of third-party software could not be loaded.');
  });

  it('counts in Russian with its plural forms', async () => {
    const small: ThirdParty = {
      groups: [{ licence: 'MIT', packages: ['a', 'b', 'c', 'd', 'e'].map((name) => ({ kind: 'npm', name, version: '1.0.0' })) }],
      licences: { MIT: { name: 'MIT License', url: 'https://opensource.org/license/mit/', text: 'MIT text' } },
    };
    const user = renderList({ load: async () => small }, 'ru');
    await screen.findByRole('searchbox', { name: 'Фильтр по названию или лицензии' });
    expect(screen.getByRole('status'), 'five takes the “many” form').toHaveTextContent('5 пакетов');
    await user.type(screen.getByRole('searchbox'), 'a');
    expect(screen.getByRole('status'), 'one takes the “one” form').toHaveTextContent('Подходит 1 пакет');
    expect(screen.getByText('a'), 'a package without a project address is named without a link').not.toHaveAttribute('href');
  });
});
