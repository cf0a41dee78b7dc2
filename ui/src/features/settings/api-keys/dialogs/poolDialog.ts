import type { Translate } from '../../../../i18n/problems';
import type { ExportedKeys } from '../../../../ipc/bindings';
import type { KeyRow } from '../keyRows';

/** Which dialog is open, if any: each carries exactly what it needs. */
export type PoolDialog =
  | { kind: 'none' }
  | { kind: 'add' }
  | { kind: 'import' }
  /** Deleting the selected keys: one confirmation naming the count. */
  | { kind: 'bulkDelete'; ids: string[] }
  /** Exporting the selected keys in full: a warning first, then the backend's save dialog. */
  | { kind: 'exportFull'; ids: string[] }
  | { kind: 'delete'; row: KeyRow }
  | { kind: 'edit'; row: KeyRow }
  /** Switching back on a key the provider refused (`status`): asked first, with a test offered. */
  | { kind: 'revoked'; row: KeyRow; status: string }
  /** Switching on several keys, some of which the provider refused (`refused`): asked first, with a test offered. */
  | { kind: 'bulkRevoked'; ids: string[]; refused: string[] };

/** Where the keys went, or that no file was chosen. */
export function exportedText(t: Translate, exported: ExportedKeys): string {
  return exported.path === null ? t('bulkbar.exportCancelled') : t('bulkbar.exported', { count: exported.count, path: exported.path });
}
