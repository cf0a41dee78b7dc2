/** How long an answered write's `llmConfig:changed` is waited for before it is taken as lost. */
export const ECHO_WAIT_MS = 3000;

/** One write of this view: whether an event was taken as its echo, and when it answered. */
export interface Echo {
  heard: boolean;
  answeredAt: number | null;
}

/**
 * The `llmConfig:changed` events this view's own writes cause. The backend emits one after every
 * write it commits (none after a refused one) and names only the provider; the view already shows
 * the write's answer, so that echo is not read again.
 *
 * Events and answers come in either order, so a write in flight takes the next event heard,
 * whichever write caused it. An event taken by mistake leaves one over: the write's own echo,
 * which then reloads, or nothing if the write failed, which says so (`failed` answers true). An
 * answered write's echo that never comes is given up after {@link ECHO_WAIT_MS}, so it cannot
 * swallow a later event of another's. `now` is passed in; nothing here keeps time.
 */
export function ownWrites() {
  let echoes: Echo[] = [];
  const drop = (echo: Echo) => {
    echoes = echoes.filter((each) => each !== echo);
  };
  return {
    /** A write starts: the next event heard may be its echo. */
    expect(): Echo {
      const echo: Echo = { heard: false, answeredAt: null };
      echoes.push(echo);
      return echo;
    },
    /** An event came: true when it is taken as a write's echo (nothing to read again). */
    heard(now: number): boolean {
      echoes = echoes.filter((echo) => echo.answeredAt === null || now - echo.answeredAt <= ECHO_WAIT_MS);
      const waiting = echoes.find((echo) => !echo.heard);
      if (!waiting) return false;
      waiting.heard = true;
      if (waiting.answeredAt !== null) drop(waiting);
      return true;
    },
    /** The write answered at `now`; its echo, if not heard yet, is waited for. */
    answered(echo: Echo, now: number) {
      if (echo.heard) drop(echo);
      else echo.answeredAt = now;
    },
    /** The write failed, so it causes no event: true when it had taken one, which was another's to read. */
    failed(echo: Echo): boolean {
      drop(echo);
      return echo.heard;
    },
    /** Forgets every write (another provider is shown). */
    reset() {
      echoes = [];
    },
  };
}

export type OwnWrites = ReturnType<typeof ownWrites>;
