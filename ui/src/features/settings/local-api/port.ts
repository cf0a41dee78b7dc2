import type { Issue } from '../../../ipc/bindings';
import { wholeNumberFromText } from '../api-keys/schema';

/** The backend's range for the local API's port (`localApi:configure`): no privileged ports. */
export const MIN_PORT = 1024;
export const MAX_PORT = 65535;
export const DEFAULT_PORT = 4141;

/**
 * A port as typed: plain digits from 1024 to 65535. A wrong one is described by the issue the
 * backend would report, so it is worded the same way whichever side finds it.
 */
export function parsePort(text: string): { ok: true; port: number } | { ok: false; issue: Issue } {
  const port = wholeNumberFromText(text);
  if (Number.isNaN(port)) return { ok: false, issue: { path: 'port', code: 'wrong_type', params: { expected: 'integer' }, message: 'must be an integer' } };
  if (port < MIN_PORT) return { ok: false, issue: { path: 'port', code: 'too_small', params: { min: MIN_PORT }, message: `must be at least ${MIN_PORT}` } };
  if (port > MAX_PORT) return { ok: false, issue: { path: 'port', code: 'too_large', params: { max: MAX_PORT }, message: `must be at most ${MAX_PORT}` } };
  return { ok: true, port };
}
