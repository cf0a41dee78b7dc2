import { errorText, issueText, type Translate } from '../i18n/problems';
import { IpcError } from '../ipc/client';

/**
 * Where a rejected write's words belong: at a field (validation issues by path, the field's name
 * unless `paths` names another, such as `limits.rpmLimit`; a `conflict` on add means the key is
 * already in the pool, so it belongs at the key) or above the form. Worded in the UI's language
 * from the codes.
 */
export function placeBackendError<F extends string>(
  t: Translate,
  error: unknown,
  fields: readonly F[],
  conflictField?: F,
  paths: Partial<Record<F, string>> = {},
): { fields: Partial<Record<F, string>>; form?: string } {
  if (!(error instanceof IpcError)) return { fields: {}, form: errorText(t, error) };
  const placed: Partial<Record<F, string>> = {};
  for (const field of fields) {
    const issue = error.issueAt(paths[field] ?? field);
    if (issue) placed[field] = issueText(t, issue);
  }
  if (error.code === 'conflict' && conflictField) placed[conflictField] = errorText(t, error);
  const atAField = Object.keys(placed).length > 0;
  return { fields: placed, form: atAField ? undefined : errorText(t, error) };
}
