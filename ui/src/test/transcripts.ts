/// <reference types="vite/client" />
import type { IpcError, Provider } from '../ipc/bindings';

/*
 * The backend's transcripts (src-tauri/crates/api/tests/api/transcripts.rs): chosen scenarios,
 * every command with its arguments and the backend's answer or error, as the real backend gave
 * them. What is not the backend's to decide is marked the same way on both sides:
 * - an id the backend made up (at a field `id` or `…Id`, not given by an argument before) is
 *   `<id:N>`, numbered in the order they first appear, wherever it appears;
 * - a time (a number at a field named in `times`) is `<time>`;
 * - an error's `message` and its issues' are English fallbacks the UI does not word errors
 *   from: they are not compared.
 */

export interface Step {
  command: string;
  args: Record<string, unknown>;
  answer?: unknown;
  error?: IpcError;
}

export interface Transcript {
  scenario: string;
  about: string;
  times: string[];
  /** The state the backend starts from. */
  given: { providers: Provider[] };
  steps: Step[];
}

/** Every checked-in transcript, by scenario. */
export const TRANSCRIPTS: Transcript[] = Object.values(
  import.meta.glob<Transcript>('./transcripts/*.json', { eager: true, import: 'default' }),
);

export function transcript(scenario: string): Transcript {
  const found = TRANSCRIPTS.find((t) => t.scenario === scenario);
  if (!found) throw new Error(`no transcript ${scenario} in ui/src/test/transcripts/`);
  return found;
}

const isIdField = (name: string) => name === 'id' || name.endsWith('Id');

/**
 * One side's ids as a transcript names them: ids this side made up get the next token as they
 * first appear in its answers; a transcript's arguments get this side's ids back for the tokens.
 */
export class Ids {
  private readonly given = new Set<string>();
  private readonly tokens = new Map<string, string>();
  private readonly values = new Map<string, string>();

  /** `args` of a transcript with its tokens replaced by this side's ids (remembered as given). */
  args<T>(args: T): T {
    const real = this.map(args, (text) => this.values.get(text) ?? text) as T;
    this.collect(real);
    return real;
  }

  /** An answer or error of this side, written as the transcript writes them. */
  marked(value: unknown, times: readonly string[]): unknown {
    this.mint(value, null);
    const withTokens = this.map(value, (text) => {
      let out = text;
      for (const [id, token] of this.tokens) out = out.split(id).join(token);
      return out;
    });
    return markTimes(withTokens, times);
  }

  private mint(value: unknown, field: string | null) {
    if (typeof value === 'string') {
      if (field !== null && isIdField(field) && !this.given.has(value) && !this.tokens.has(value)) {
        const token = `<id:${this.tokens.size + 1}>`;
        this.tokens.set(value, token);
        this.values.set(token, value);
      }
    } else if (Array.isArray(value)) {
      for (const item of value) this.mint(item, field);
    } else if (value !== null && typeof value === 'object') {
      for (const [name, inner] of Object.entries(value)) this.mint(inner, name);
    }
  }

  private collect(value: unknown) {
    if (typeof value === 'string') this.given.add(value);
    else if (Array.isArray(value)) for (const item of value) this.collect(item);
    else if (value !== null && typeof value === 'object') for (const inner of Object.values(value)) this.collect(inner);
  }

  private map(value: unknown, text: (s: string) => string): unknown {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map((item) => this.map(item, text));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, this.map(inner, text)]));
    }
    return value;
  }
}

/** `value` with every time (a number at a field named in `times`) written as `<time>`. */
export function markTimes(value: unknown, times: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => markTimes(item, times));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([name, inner]) => [name, typeof inner === 'number' && times.includes(name) ? '<time>' : markTimes(inner, times)]),
    );
  }
  return value;
}

/** An error as compared: its code, issues and details, without the English fallbacks. */
export function comparable(error: unknown): unknown {
  if (error === null || typeof error !== 'object' || !('code' in error)) return { notAnIpcError: String(error) };
  const { message: _, issues, ...rest } = error as IpcError;
  return { ...rest, ...(issues ? { issues: issues.map(({ message: _m, ...issue }) => issue) } : {}) };
}
