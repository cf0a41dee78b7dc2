import { invoke } from '@tauri-apps/api/core';

/** The codes the backend may reject a command with (see README, "IPC commands"). */
export type ErrorCode =
  | 'validation'
  | 'not_found'
  | 'conflict'
  | 'storage'
  | 'provider'
  | 'no_available_key'
  | 'internal';

export interface Issue {
  path: string;
  message: string;
}

/** The one error shape that crosses IPC: `{ code, message, issues? }`. */
export class IpcError extends Error {
  readonly code: ErrorCode;
  readonly issues: Issue[];

  constructor(code: ErrorCode, message: string, issues: Issue[] = []) {
    super(message);
    this.name = 'IpcError';
    this.code = code;
    this.issues = issues;
  }

  /** The first issue reported for a field, for showing next to it. */
  issueFor(path: string): string | undefined {
    return this.issues.find((issue) => issue.path === path)?.message;
  }
}

function isIpcErrorShape(value: unknown): value is { code: ErrorCode; message: string; issues?: Issue[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

/** Calls a backend command; every rejection becomes an {@link IpcError}. */
export async function call<T>(command: string, args: Record<string, unknown> = {}): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    if (isIpcErrorShape(error)) {
      throw new IpcError(error.code, error.message, error.issues ?? []);
    }
    throw new IpcError('internal', typeof error === 'string' ? error : String(error));
  }
}
