import { describe, expect, it } from 'vitest';
import { declarations, stylesheet } from '../../../test/css';

describe('the Settings section list', () => {
  it('stays in view beside a long section, scrolling on its own when the window is shorter than it', () => {
    const nav = declarations(stylesheet('styles.css'), '.subnav');
    expect(nav.position, 'the page scrolls as a whole: the list sticks to its top').toBe('sticky');
    expect(nav.top).toBe('0');
    expect(nav['align-self'], 'as tall as its items, not the whole section, or it cannot stick').toBe('flex-start');
    expect(nav['max-height'], 'never taller than the window').toBe('100vh');
    expect(nav['overflow-y'], 'a list taller than the window scrolls by itself').toBe('auto');
  });
});
