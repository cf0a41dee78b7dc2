import { Channel, invoke } from '@tauri-apps/api/core';
import { listen as listenToTauri } from '@tauri-apps/api/event';
import type { Commands, ErrorCode, ErrorDetails, Events, IpcError as IpcErrorShape, Issue, NoArgs } from './bindings';

/*
 * The typed doorway to the backend. Command names, their arguments, results and stream events,
 * and the events the backend emits all come from `bindings.ts`, generated from the Rust types:
 * a contract change is a type error here and in every caller.
 */

/** Commands that stream events through a Channel besides answering (`chat:send`). */
export type StreamCommand = { [C in keyof Commands]: Commands[C] extends { kind: 'stream' } ? C : never }[keyof Commands];
/** Commands that answer once; called with {@link call}. */
export type CallCommand = Exclude<keyof Commands, StreamCommand>;

export type ArgsOf<C extends keyof Commands> = Commands[C]['args'];
export type ResultOf<C extends keyof Commands> = Commands[C]['result'];
export type EventOf<C extends StreamCommand> = Commands[C] extends { event: infer E } ? E : never;

/** Arguments may be left out only for a command that takes none. */
type ArgsParameter<C extends keyof Commands> = [ArgsOf<C>] extends [NoArgs] ? [args?: NoArgs] : [args: ArgsOf<C>];

/** The one error shape that crosses IPC: `{ code, message, issues?, details? }`. */
export class IpcError extends Error {
  readonly code: ErrorCode;
  readonly issues: Issue[];
  /** What the UI needs to word some errors precisely (e.g. which keys a host change would send). */
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, issues: Issue[] = [], details?: ErrorDetails) {
    super(message);
    this.name = 'IpcError';
    this.code = code;
    this.issues = issues;
    this.details = details;
  }

  /** The first issue reported for a field, for wording next to it (see `i18n/problems`). */
  issueAt(path: string): Issue | undefined {
    return this.issues.find((issue) => issue.path === path);
  }
}

function isIpcErrorShape(value: unknown): value is IpcErrorShape {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { code?: unknown }).code === 'string' &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

async function request<T>(command: keyof Commands, args: object): Promise<T> {
  try {
    return await invoke<T>(command, args as Record<string, unknown>);
  } catch (error) {
    if (isIpcErrorShape(error)) {
      throw new IpcError(error.code, error.message, error.issues ?? [], error.details);
    }
    throw new IpcError('internal', typeof error === 'string' ? error : String(error));
  }
}

/** Calls a backend command; every rejection becomes an {@link IpcError}. */
export function call<C extends CallCommand>(command: C, ...[args]: ArgsParameter<C>): Promise<ResultOf<C>> {
  return request(command, args ?? {});
}

/**
 * Calls a streaming command: its events go to `onEvent` as they come, through a Channel passed
 * as the `onEvent` argument. Resolves with the command's answer, after its last event was sent.
 */
export function stream<C extends StreamCommand>(command: C, args: ArgsOf<C>, onEvent: (event: EventOf<C>) => void): Promise<ResultOf<C>> {
  const channel = new Channel<EventOf<C>>();
  channel.onmessage = onEvent;
  return request(command, { ...args, onEvent: channel });
}

/**
 * Calls `handler` with the payload of every `event` the backend emits. Returns an unsubscribe
 * function usable at once, even before the subscription is confirmed.
 */
export function listen<E extends keyof Events>(event: E, handler: (payload: Events[E]) => void): () => void {
  let stopped = false;
  let unlisten: (() => void) | undefined;
  listenToTauri<Events[E]>(event, ({ payload }) => {
    if (!stopped) handler(payload);
  }).then(
    (stop) => {
      if (stopped) stop();
      else unlisten = stop;
    },
    (error: unknown) => console.error(`could not subscribe to ${event}`, error),
  );
  return () => {
    stopped = true;
    unlisten?.();
  };
}

/**
 * Drops `undefined` fields so they are absent from the IPC payload: the backend rejects an
 * explicit `null`, and an optional field left `undefined` means "not given".
 */
export function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
