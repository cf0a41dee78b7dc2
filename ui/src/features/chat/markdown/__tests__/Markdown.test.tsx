import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../i18n/I18nProvider';
import { createFakeBackend, type FakeBackend } from '../../../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args),
  Channel: class {
    onmessage: (message: unknown) => void = () => {};
  },
}));

const { Markdown } = await import('../Markdown');

function show(source: string, streaming = false) {
  return render(
    <I18nProvider initial="en">
      <Markdown source={source} streaming={streaming} />
    </I18nProvider>,
  );
}

describe('replies as Markdown', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('renders GitHub-flavoured tables, task lists, strikethrough, lists and headings', () => {
    const { container } = show(
      '# Plan\n\n| Key | Weight |\n|---|---:|\n| A | 3 |\n| B | 1 |\n\n- [x] parse\n- [ ] ship\n\n1. one\n2. two\n\n~~old~~ new',
    );
    const table = screen.getByRole('table');
    expect(within(table).getAllByRole('columnheader').map((c) => c.textContent)).toEqual(['Key', 'Weight']);
    expect(within(table).getAllByRole('cell').map((c) => c.textContent)).toEqual(['A', '3', 'B', '1']);
    expect(screen.getByRole('figure', { name: 'Table' }), 'a wide table scrolls in a labelled, focusable box').toHaveAttribute('tabindex', '0');
    expect(screen.getByRole('checkbox', { name: 'Done' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'Not done' })).not.toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'Done' }), 'a reply’s task list is not a form').toBeDisabled();
    expect([...(container.querySelector('ol')?.querySelectorAll('li') ?? [])].map((li) => li.textContent)).toEqual(['one', 'two']);
    expect(container.querySelector('del')).toHaveTextContent('old');
    expect(screen.getByRole('heading', { level: 3 }), 'a # heading sits below the chat’s own h2').toHaveTextContent('Plan');
  });

  it('highlights a fenced code block in a named language and copies it as written', async () => {
    const user = userEvent.setup(); // gives the page a clipboard, as the web view has
    const code = 'const answer = 42;\nconsole.log(answer);';
    const { container } = show(`Intro\n\n\`\`\`ts\n${code}\n\`\`\`\n`);
    const block = screen.getByTestId('code-block');
    expect(block).toHaveAttribute('data-language', 'ts');
    expect(block.querySelector('code')?.textContent).toBe(code);
    expect(container.querySelector('.hljs-keyword')?.textContent, 'keywords are marked for colour').toBe('const');
    await user.click(within(block).getByRole('button', { name: 'Copy code' }));
    expect(await navigator.clipboard.readText()).toBe(code);
    expect(within(block).getByRole('button', { name: 'Copy code' })).toHaveTextContent('Copied');
  });

  it('leaves code in an unknown language, or none, plain', () => {
    const { container } = show('```\nplain words\n```\n\n```nosuchlang\nx = 1\n```');
    expect(container.querySelectorAll('.hljs-keyword, [class^="hljs-"]')).toHaveLength(0);
    expect(screen.getAllByTestId('code-block').map((b) => b.querySelector('code')?.textContent)).toEqual(['plain words', 'x = 1']);
  });

  it.each([
    ['an image with an error handler', '<img src=x onerror="window.__pwned = 1">', 'img'],
    ['a script', '<script>window.__pwned = 1</script>', 'script'],
    ['an iframe', '<iframe src="https://evil.test"></iframe>', 'iframe'],
    ['a link with a click handler', '<a href="https://evil.test" onclick="window.__pwned = 1">x</a>', 'a'],
    ['a style block', '<style>body { display: none }</style>', 'style'],
    ['an inline handler in a span', 'hi <span onmouseover="window.__pwned = 1">there</span>', 'span[onmouseover]'],
  ])('shows HTML as text, never as elements: %s', (_what, html, selector) => {
    const { container } = show(`Before ${html} after\n\n${html}`);
    expect(container.querySelector(selector), `no ${selector} element`).toBeNull();
    expect(container.textContent, 'the markup is shown as written').toContain(html);
    expect((window as { __pwned?: unknown }).__pwned).toBeUndefined();
  });

  it('shows a javascript: or relative link as inert text, with its target in the tooltip', () => {
    const { container } = show('[run](javascript:window.__pwned=1) and [local](/etc/passwd)');
    expect(container.querySelector('a'), 'no link element at all').toBeNull();
    const inert = container.querySelectorAll('.md-link--inert');
    expect([...inert].map((e) => e.textContent)).toEqual(['run', 'local']);
    expect(inert[1]).toHaveAttribute('title', '/etc/passwd');
  });

  it('opens an http(s) link in the system browser on click, without following it in the window', async () => {
    const before = window.location.href;
    show('See [the guide](https://docs.example.test/guide?x=1) or https://example.test/plain');
    const link = screen.getByRole('link', { name: 'the guide' });
    expect(link).toHaveAttribute('href', 'https://docs.example.test/guide?x=1');
    expect(link, 'where it goes is said').toHaveAttribute('title', 'Opens https://docs.example.test/guide?x=1 in your browser');
    expect(link.nextSibling?.textContent, 'a link whose text hides its target shows the host').toBe(' (docs.example.test)');
    const followed = fireEvent.click(link);
    expect(followed, 'the click does not follow the link in the window').toBe(false);
    expect(window.location.href).toBe(before);
    await waitFor(() => expect(backend.opened()).toEqual(['https://docs.example.test/guide?x=1']));
    const plain = screen.getByRole('link', { name: 'https://example.test/plain' });
    expect(plain.nextSibling, 'a bare URL is not repeated').toBeNull();
    expect(fireEvent(plain, new MouseEvent('auxclick', { bubbles: true, cancelable: true, button: 1 })), 'a middle click opens nothing').toBe(false);
  });

  it('does not load images: it links to them instead', () => {
    const { container } = show('![chart](https://evil.test/pixel.png) ![inline](data:image/png;base64,AAAA)');
    expect(container.querySelector('img')).toBeNull();
    expect(screen.getByRole('link', { name: '[Image: chart]' })).toHaveAttribute('href', 'https://evil.test/pixel.png');
    expect(container.textContent).toContain('[Image: inline]');
  });

  it('resolves a reference link whose definition is in another block', () => {
    show('A [reference][docs] here.\n\nMore text.\n\n[docs]: https://example.test/docs');
    expect(screen.getByRole('link', { name: 'reference' })).toHaveAttribute('href', 'https://example.test/docs');
  });

  it('while streaming, shows an unfinished code block as plain code, and highlights it once finished', () => {
    const { container, rerender } = show('Here:\n\n```ts\nconst a', true);
    expect(screen.getByTestId('code-block').querySelector('code')?.textContent).toBe('const a');
    expect(container.querySelector('.hljs-keyword'), 'not highlighted while it grows').toBeNull();
    rerender(
      <I18nProvider initial="en">
        <Markdown source={'Here:\n\n```ts\nconst a = 1;\n```\n\nDone.'} streaming />
      </I18nProvider>,
    );
    expect(container.querySelector('.hljs-keyword')?.textContent, 'a finished block is highlighted').toBe('const');
  });

  it('renders a reply streamed piece by piece exactly as the whole reply', async () => {
    const source = '# T\n\nPara one\nline two\n\n- a\n- b\n\n```js\nlet x = 1;\n```\n\n| h |\n|---|\n| c |\n\nEnd [l](https://e.test).';
    const whole = show(source).container.innerHTML;
    const streamed = render(
      <I18nProvider initial="en">
        <Markdown source="" streaming />
      </I18nProvider>,
    );
    for (let end = 1; end <= source.length; end += 3) {
      streamed.rerender(
        <I18nProvider initial="en">
          <Markdown source={source.slice(0, end)} streaming />
        </I18nProvider>,
      );
    }
    streamed.rerender(
      <I18nProvider initial="en">
        <Markdown source={source} />
      </I18nProvider>,
    );
    await waitFor(() => expect(streamed.container.innerHTML).toBe(whole));
  });
});
