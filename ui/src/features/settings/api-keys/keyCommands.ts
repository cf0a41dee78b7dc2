import type { KeyRow } from './keyRows';

/**
 * What a row asks of the pool, as one object whose identity never changes (the section keeps
 * it): a weight typed in a row goes from its editor through `weight` straight to the pool's write.
 */
export interface KeyCommands {
  weight: (id: string, weight: number) => Promise<unknown>;
  toggle: (id: string, enabled: boolean) => void;
  /** Switches on a disabled key that just tested fine (nothing left to ask). */
  enable: (id: string) => void;
  remove: (row: KeyRow) => void;
  edit: (row: KeyRow) => void;
  resetCooldown: (id: string) => void;
  /** A cooldown or a model's rest ran out: the pool's status is read again. */
  cooldownEnd: () => void;
  test: (id: string) => void;
}
