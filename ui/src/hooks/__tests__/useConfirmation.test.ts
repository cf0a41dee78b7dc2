import { act, renderHook } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { useConfirmation } from '../useConfirmation';

describe('useConfirmation', () => {
  it('shows the question until it is answered, and resolves with the answer', async () => {
    const { result } = renderHook(() => useConfirmation<string>());
    let answered!: Promise<boolean>;
    act(() => {
      answered = result.current.ask('send keys?');
    });
    expect(result.current.question, 'the question is shown').toBe('send keys?');
    act(() => result.current.answer(true));
    await expect(answered).resolves.toBe(true);
    expect(result.current.question, 'and gone once answered').toBeNull();
  });

  it('answers a pending question "no" when another is asked or the component goes', async () => {
    const { result, unmount } = renderHook(() => useConfirmation<string>());
    let first!: Promise<boolean>;
    let second!: Promise<boolean>;
    act(() => {
      first = result.current.ask('first?');
    });
    act(() => {
      second = result.current.ask('second?');
    });
    await expect(first, 'a replaced question never proceeds').resolves.toBe(false);
    expect(result.current.question).toBe('second?');
    unmount();
    await expect(second, 'a flow waiting on an unmounted dialog does not hang').resolves.toBe(false);
  });
});
