import { useLayoutEffect, useMemo, useRef } from 'react';

/**
 * An object of functions whose identity never changes, each calling the latest of `current`'s
 * (updated after every render), so memoized rows can hold it without drawing again.
 */
export function useStable<T extends object>(current: T): T {
  const latest = useRef(current);
  useLayoutEffect(() => {
    latest.current = current;
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: made once; `latest` carries every later `current`
  return useMemo(
    () =>
      Object.fromEntries(
        Object.keys(current).map((name) => [name, (...args: unknown[]) => (latest.current[name as keyof T] as (...a: unknown[]) => unknown)(...args)]),
      ) as T,
    [],
  );
}
