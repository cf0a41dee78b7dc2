/** A write of a view, from its start to its answer (or failure). */
export interface OwnWrite {
  readonly epoch: number;
}

/**
 * Which `llmConfig:changed` events a view has applied already. The backend counts the writes it
 * commits: each gets the next generation, which its event carries, and a key command answers with
 * the generation its write got. A view that shows its own write's answer has applied that
 * generation, so the event that echoes it reads nothing again; an event of any other generation is
 * a change the view has not seen, and is read.
 *
 * An event may come before the answer of the write that caused it (they travel apart). One heard
 * while a write of the view is in flight waits until every write in flight has answered or failed:
 * then it is known to be an echo or not. Nothing here keeps time.
 */
export function writeGenerations() {
  /** The generations of the answers the view shows whose events have not come yet. */
  let applied = new Set<number>();
  /** The newest generation the view applied from an answer of its own; 0: none yet. */
  let newest = 0;
  /** Events heard while writes of the view were in flight. */
  let waiting: number[] = [];
  let inFlight = 0;
  /** Bumped by `reset`: writes started before it are another view's. */
  let epoch = 0;

  const isEcho = (generation: number) => applied.delete(generation);
  /** A write settled: true when an event that waited for it was not an echo (to be read). */
  const settled = (write: OwnWrite): boolean => {
    if (write.epoch !== epoch) return false;
    inFlight -= 1;
    if (inFlight > 0) return false;
    const others = waiting.filter((generation) => !isEcho(generation));
    waiting = [];
    return others.length > 0;
  };

  return {
    /** A write of the view starts. */
    started(): OwnWrite {
      inFlight += 1;
      return { epoch };
    },
    /**
     * The write answered with the generation it got, and the view shows the answer. True when an
     * event heard meanwhile was another write's, so the view reads again.
     */
    answered(write: OwnWrite, generation: number): boolean {
      if (write.epoch === epoch) {
        applied.add(generation);
        newest = Math.max(newest, generation);
      }
      return settled(write);
    },
    /** The write failed: it committed nothing and causes no event. True as for `answered`. */
    failed(write: OwnWrite): boolean {
      return settled(write);
    },
    /** An event of `generation` came: true when the view reads again now. */
    heard(generation: number): boolean {
      if (isEcho(generation)) return false;
      if (inFlight > 0) {
        waiting.push(generation);
        return false;
      }
      return true;
    },
    /**
     * The newest generation the view applied from its own answers. A read that started before it
     * grew may have read the keys before that write committed: generations grow in the order the
     * writes commit, so one that did not grow was read.
     */
    newest(): number {
      return newest;
    },
    /** Forgets every write (the view shows another provider). */
    reset() {
      applied = new Set();
      newest = 0;
      waiting = [];
      inFlight = 0;
      epoch += 1;
    },
  };
}

export type WriteGenerations = ReturnType<typeof writeGenerations>;
