import { renderHook } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { IpcError } from '../../ipc/client';
import { useLatestLoad } from '../useLatestLoad';

/** A load whose answer the test releases. */
function pending<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('useLatestLoad', () => {
  it('applies only the load started last, whichever answers first', async () => {
    const { result } = renderHook(() => useLatestLoad());
    const first = pending<string>();
    const second = pending<string>();
    const loaded = vi.fn();
    const runs = [first, second].map((load) => result.current.run(() => load.promise, { loaded, failed: vi.fn() }));
    second.resolve('new');
    first.resolve('old');
    const numbers = await Promise.all(runs);
    expect(loaded, 'the overtaken answer is dropped').toHaveBeenCalledTimes(1);
    expect(loaded).toHaveBeenCalledWith('new');
    expect(numbers[1], 'loads are numbered in the order they start').toBeGreaterThan(numbers[0]);
  });

  it('hands a failure to `failed`, as an IpcError', async () => {
    const { result } = renderHook(() => useLatestLoad());
    const failed = vi.fn();
    await result.current.run(() => Promise.reject(new TypeError('boom')), { loaded: vi.fn(), failed });
    expect(failed).toHaveBeenCalledWith(expect.any(IpcError));
    expect(failed.mock.calls[0][0]).toMatchObject({ code: 'internal', message: 'TypeError: boom' });
  });

  it('drops what answers after cancel() or after unmount', async () => {
    const { result, unmount } = renderHook(() => useLatestLoad());
    const loads = result.current;
    const cancelled = pending<string>();
    const outlived = pending<string>();
    const loaded = vi.fn();
    const failed = vi.fn();
    const beforeCancel = loads.run(() => cancelled.promise, { loaded, failed });
    loads.cancel();
    cancelled.resolve('for another provider');
    await beforeCancel;
    const beforeUnmount = loads.run(() => outlived.promise, { loaded, failed });
    unmount();
    outlived.reject(new IpcError('storage', 'too late'));
    await beforeUnmount;
    expect(loaded).not.toHaveBeenCalled();
    expect(failed).not.toHaveBeenCalled();
  });

  it('numbers a load started after lastNumber() above it', async () => {
    const { result } = renderHook(() => useLatestLoad());
    const mark = result.current.lastNumber();
    const number = await result.current.run(() => Promise.resolve(1), { loaded: vi.fn(), failed: vi.fn() });
    expect(number).toBeGreaterThan(mark);
  });

  it('stays the same object across renders, so effects need not rerun', () => {
    const { result, rerender } = renderHook(() => useLatestLoad());
    const before = result.current;
    rerender();
    expect(result.current).toBe(before);
  });
});
