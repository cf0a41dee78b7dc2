import { act, render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../../i18n/I18nProvider';

describe('the Markdown renderer, loaded on first use', () => {
  it('shows a reply as its plain text until the renderer is there, then as Markdown', async () => {
    // A module registry of its own: the test setup has loaded the renderer in the shared one.
    vi.resetModules();
    const lazy = await import('../LazyMarkdown');
    render(
      <I18nProvider initial="en">
        <lazy.Markdown source={'**bold** and `code`'} />
      </I18nProvider>,
    );
    const plain = screen.getByTestId('markdown');
    expect(plain, 'the reply is readable at once, as it was written').toHaveTextContent('**bold** and `code`');
    expect(plain.querySelector('strong'), 'nothing is rendered as Markdown yet').toBeNull();

    await act(async () => {
      await lazy.preloadMarkdown();
    });
    const rendered = screen.getByTestId('markdown');
    expect(rendered.querySelector('strong'), 'once loaded, the same reply is Markdown').toHaveTextContent('bold');
    expect(rendered, 'the Markdown syntax is gone').not.toHaveTextContent('**');
  });
});
