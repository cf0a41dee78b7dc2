import type { Issue, Provider, Route, RouteInput } from '../../../ipc/bindings';
import { IpcError } from '../../../ipc/client';

/*
 * The local API's routes as the Routes list edits them. Pure: every change (add, edit, move,
 * delete) is a new list, which `localApi:setRoutes` saves whole.
 */

/** The fields of a route the UI sends. */
export type RouteField = keyof RouteInput;

/** A route as `localApi:setRoutes` takes it. */
export const inputOf = ({ model, provider, toModel }: Route | RouteInput): RouteInput => ({ model, provider, toModel });

/** The list with `route` at `index` (`index === routes.length`: added at the end). */
export function withRoute(routes: readonly Route[], index: number, route: RouteInput): RouteInput[] {
  const list = routes.map(inputOf);
  list.splice(index, index < list.length ? 1 : 0, route);
  return list;
}

/** The list without the route at `index`. */
export function withoutRoute(routes: readonly Route[], index: number): RouteInput[] {
  return routes.map(inputOf).filter((_, i) => i !== index);
}

/** The list with the route at `index` moved by `by` places (-1: up, +1: down); null when it cannot move. */
export function movedRoute(routes: readonly Route[], index: number, by: -1 | 1): RouteInput[] | null {
  const to = index + by;
  if (to < 0 || to >= routes.length) return null;
  const list = routes.map(inputOf);
  [list[index], list[to]] = [list[to], list[index]];
  return list;
}

/** Whether `model` matches the glob `pattern` (`*` any run of characters, `?` one), as the backend matches. */
export function globMatches(pattern: string, model: string): boolean {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's').test(model);
}

/** The first route (its index) a model asked for goes to, or -1: the first match wins. */
export function firstMatch(routes: readonly RouteInput[], model: string): number {
  return routes.findIndex((r) => globMatches(r.model, model));
}

/**
 * The issues of a refused save that are about the route at `index`, by field (`routes[2].toModel`
 * → `toModel`); `localApi:testRoute`'s (`route.provider`) count as the route being tried.
 */
export function routeIssues(error: unknown, index: number): Partial<Record<RouteField, Issue>> {
  if (!(error instanceof IpcError)) return {};
  const out: Partial<Record<RouteField, Issue>> = {};
  for (const issue of error.issues) {
    const match = /^(?:routes\[(\d+)\]|route)\.(model|provider|toModel)$/.exec(issue.path);
    if (match && (match[1] === undefined || Number(match[1]) === index)) out[match[2] as RouteField] ??= issue;
  }
  return out;
}

/** The models a route may send to, for suggestions: the provider's own list and its default. */
export function providerModels(provider: Provider | undefined): string[] {
  if (!provider) return [];
  const models = [...provider.models];
  if (provider.defaultModel && !models.includes(provider.defaultModel)) models.push(provider.defaultModel);
  return models;
}
