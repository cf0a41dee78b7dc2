/**
 * Named points of a start, as `performance` marks (`keypool:script`, …): the app bench
 * (tests/bench/app.mjs) reads them to say where the time between the page's load and its first
 * paint goes. A mark costs microseconds and is kept in the page only.
 */
export type StartupPoint = 'script' | 'preferences' | 'status' | 'shell';

export function markStartup(point: StartupPoint) {
  performance.mark(`keypool:${point}`);
}
