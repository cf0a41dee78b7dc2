import { describe, expect, it } from 'vitest';
import type { Route } from '../../../../ipc/bindings';
import { IpcError } from '../../../../ipc/client';
import { firstMatch, globMatches, movedRoute, routeIssues, withoutRoute, withRoute } from '../routes';

const route = (model: string): Route => ({ model, provider: 'openai', providerName: 'OpenAI', toModel: 'gpt-4o', state: 'ready' });

describe('routes', () => {
  it('matches a glob as the backend does: * any run, ? one character, the rest itself', () => {
    expect(globMatches('claude-*', 'claude-sonnet-4-6')).toBe(true);
    expect(globMatches('claude-*', 'claude-'), 'a star matches nothing too').toBe(true);
    expect(globMatches('claude-*', 'gpt-5')).toBe(false);
    expect(globMatches('gpt-5?', 'gpt-5o') && !globMatches('gpt-5?', 'gpt-5'), 'a question mark is one character').toBe(true);
    expect(globMatches('gemini-2.5-pro', 'gemini-2x5-pro'), 'a dot is a dot').toBe(false);
    expect(globMatches('*', 'anything/at-all')).toBe(true);
    expect(firstMatch([route('gpt-*'), route('*')], 'gpt-5'), 'the first match wins').toBe(0);
    expect(firstMatch([route('gpt-*')], 'claude-x'), 'none').toBe(-1);
  });

  it('makes each change a new list: add, replace, move, delete', () => {
    const list = [route('a'), route('b'), route('c')];
    expect(withRoute(list, 3, { model: 'd', provider: 'p', toModel: 'm' }).map((r) => r.model)).toEqual(['a', 'b', 'c', 'd']);
    expect(withRoute(list, 1, { model: 'B', provider: 'p', toModel: 'm' }).map((r) => r.model)).toEqual(['a', 'B', 'c']);
    expect(movedRoute(list, 2, -1)?.map((r) => r.model)).toEqual(['a', 'c', 'b']);
    expect(movedRoute(list, 0, -1), 'the first cannot go up').toBeNull();
    expect(movedRoute(list, 2, 1), 'the last cannot go down').toBeNull();
    expect(withoutRoute(list, 1).map((r) => r.model)).toEqual(['a', 'c']);
    expect(withRoute(list, 0, { model: 'x', provider: 'p', toModel: 'm' })[0], 'only what the backend takes').toEqual({ model: 'x', provider: 'p', toModel: 'm' });
  });

  it('finds the issues of the route being edited, saved or tried', () => {
    const error = new IpcError('validation', 'invalid', [
      { path: 'routes[0].model', code: 'bad_glob', message: '' },
      { path: 'routes[2].toModel', code: 'blank', message: '' },
      { path: 'routes[2].provider', code: 'unknown_provider', message: '' },
    ]);
    expect(Object.keys(routeIssues(error, 2)).sort()).toEqual(['provider', 'toModel']);
    expect(routeIssues(error, 0).model?.code).toBe('bad_glob');
    expect(routeIssues(error, 1)).toEqual({});
    const tried = new IpcError('validation', 'invalid', [{ path: 'route.provider', code: 'unknown_provider', message: '' }]);
    expect(routeIssues(tried, 5).provider?.code, 'a tried route is the one in hand').toBe('unknown_provider');
    expect(routeIssues(new Error('x'), 0)).toEqual({});
  });
});
