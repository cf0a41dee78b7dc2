import { type Issue, LIMITS } from '../../../ipc/bindings';
import { wholeNumberFromText } from '../../../forms/parsers';

/**
 * A port as typed: plain digits within the backend's `LIMITS.port` (no privileged ports). A
 * wrong one is described by the issue the backend would report, so it is worded the same way
 * whichever side finds it.
 */
export function parsePort(text: string): { ok: true; port: number } | { ok: false; issue: Issue } {
  const { min, max } = LIMITS.port;
  const port = wholeNumberFromText(text);
  if (Number.isNaN(port)) return { ok: false, issue: { path: 'port', code: 'wrong_type', params: { expected: 'integer' }, message: 'must be an integer' } };
  if (port < min) return { ok: false, issue: { path: 'port', code: 'too_small', params: { min }, message: `must be at least ${min}` } };
  if (port > max) return { ok: false, issue: { path: 'port', code: 'too_large', params: { max }, message: `must be at most ${max}` } };
  return { ok: true, port };
}
