import { IpcError } from '../../../ipc/client';

/**
 * Where a rejected write's message belongs: at a field (validation issues by path; a `conflict`
 * on add means the key is already in the pool, so it belongs at the key) or above the form.
 */
export function placeBackendError<F extends string>(
  error: unknown,
  fields: readonly F[],
  conflictField?: F,
): { fields: Partial<Record<F, string>>; form?: string } {
  if (!(error instanceof IpcError)) return { fields: {}, form: String(error) };
  const placed: Partial<Record<F, string>> = {};
  for (const field of fields) {
    const message = error.issueFor(field);
    if (message) placed[field] = message;
  }
  if (error.code === 'conflict' && conflictField) placed[conflictField] = error.message;
  const atAField = Object.keys(placed).length > 0;
  return { fields: placed, form: atAField ? undefined : error.message };
}
