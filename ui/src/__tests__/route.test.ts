import { describe, expect, it } from 'vitest';
import { routeFromString, routeToString } from '../route';

describe('the stored route', () => {
  it('keeps every page as one string and reads it back', () => {
    for (const route of [{ page: 'chat' }, { page: 'usage' }, { page: 'settings', section: 'localApi' }] as const) {
      expect(routeFromString(routeToString(route)), routeToString(route)).toEqual(route);
    }
    expect(routeToString({ page: 'usage' })).toBe('usage');
  });

  it('reads nothing from an unknown or damaged value', () => {
    expect(routeFromString('usage/extra')).toBeNull();
    expect(routeFromString('settings/nowhere')).toBeNull();
    expect(routeFromString(null)).toBeNull();
  });
});
