import { describe, expect, it } from 'vitest';
import { declarations, stylesheet } from '../../../test/css';

describe('the usage tables', () => {
  it('leave room below the last row for a horizontal scrollbar drawn over the content', () => {
    const scroll = declarations(stylesheet('features/usage/usage.css'), '.usage-table-scroll');
    expect(scroll['overflow-x'], 'a wide table scrolls sideways within its region').toBe('auto');
    const room = Number.parseFloat(scroll['padding-bottom'] ?? '0');
    expect(room, 'an overlay scrollbar (WebKitGTK: about 10 px) must not cover the last row').toBeGreaterThanOrEqual(10);
  });
});
