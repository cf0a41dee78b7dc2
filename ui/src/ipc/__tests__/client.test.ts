import { beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import type { ApiKey, ChatEvent, ProviderChanged } from '../bindings';

const invoke = vi.fn();
const tauriListen = vi.fn();
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (...args: unknown[]) => invoke(...args),
  Channel: class {
    onmessage: (message: unknown) => void = () => {};
  },
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: (...args: unknown[]) => tauriListen(...args) }));

const { IpcError, call, defined, listen, stream } = await import('../client');

describe('the IPC client', () => {
  beforeEach(() => {
    invoke.mockReset();
    tauriListen.mockReset();
  });

  it('sends an empty object for a command that takes no arguments', async () => {
    invoke.mockResolvedValue([]);
    await call('chat:list');
    expect(invoke).toHaveBeenCalledWith('chat:list', {});
  });

  it('turns a backend rejection into an IpcError that places its issues', async () => {
    const issue = { path: 'weight', code: 'too_large', params: { max: 100 }, message: 'must be at most 100' };
    invoke.mockRejectedValue({ code: 'validation', message: 'weight: too high', issues: [issue] });
    const error = await call('llmConfig:updateApiKey', { id: 'key-1', weight: 101 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IpcError);
    expect(error).toMatchObject({ code: 'validation', message: 'weight: too high' });
    expect(error instanceof IpcError && error.issueAt('weight'), 'the issue is found by its path').toEqual(issue);
  });

  it('keeps the details that word an error precisely', async () => {
    const details = { kind: 'hostChange', from: 'api.openai.com', to: 'evil.example', keys: ['prod'] } as const;
    invoke.mockRejectedValue({ code: 'validation', message: 'baseUrl: moves keys to another host', details });
    await expect(call('llmConfig:updateProvider', { id: 'openai', baseUrl: 'https://evil.example/v1' })).rejects.toMatchObject({ details });
  });

  it('reports a rejection without the error shape as internal', async () => {
    invoke.mockRejectedValue('command llmConfig:nope not found');
    await expect(call('chat:list')).rejects.toMatchObject({ code: 'internal', message: 'command llmConfig:nope not found' });
  });

  it('streams a command’s events through the channel it passes as onEvent', async () => {
    const message = { id: 'msg-2', chatId: 'chat-1', role: 'assistant', content: 'Hi', status: 'complete', error: null, errorCode: null, keyLabel: 'A', providerKey: false, createdAt: 0 } as const;
    invoke.mockImplementation(async (_command: string, args: { onEvent: { onmessage: (event: ChatEvent) => void } }) => {
      args.onEvent.onmessage({ type: 'delta', text: 'Hi' });
      return message;
    });
    const events: ChatEvent[] = [];
    const answer = await stream('chat:send', { request: { chatId: 'chat-1', content: 'Hello' } }, (event) => events.push(event));
    expect(invoke).toHaveBeenCalledWith('chat:send', expect.objectContaining({ request: { chatId: 'chat-1', content: 'Hello' } }));
    expect(events).toEqual([{ type: 'delta', text: 'Hi' }]);
    expect(answer).toEqual(message);
  });

  it('can be unsubscribed before the subscription is confirmed', async () => {
    let deliver!: (event: { payload: ProviderChanged }) => void;
    let confirm!: (unlisten: () => void) => void;
    tauriListen.mockImplementation((_event: string, handler: typeof deliver) => {
      deliver = handler;
      return new Promise((resolve) => (confirm = resolve));
    });
    const handler = vi.fn();
    const stop = listen('llmConfig:changed', handler);
    stop();
    const unlisten = vi.fn();
    confirm(unlisten);
    await Promise.resolve();
    deliver({ payload: { providerId: 'openai', generation: 1 } });
    expect(handler, 'nothing is delivered after unsubscribing').not.toHaveBeenCalled();
    expect(unlisten, 'the late subscription is undone').toHaveBeenCalled();
  });

  it('drops undefined fields, keeping empty strings and false', () => {
    expect(defined({ id: 'key-1', label: undefined, apiKey: '', enabled: false })).toEqual({ id: 'key-1', apiKey: '', enabled: false });
  });

  it('is typed by the generated command table', () => {
    // Compiled by `tsc`, never run: each line below must fail to type-check.
    const mistakes = () => {
      // @ts-expect-error getApiKeys needs a providerId
      void call('llmConfig:getApiKeys');
      // @ts-expect-error a field the command does not take
      void call('llmConfig:deleteApiKey', { id: 'key-1', force: true });
      // @ts-expect-error a streaming command is not called with `call`
      void call('chat:send', { request: { chatId: 'chat-1' } });
      // @ts-expect-error no such event
      listen('llmConfig:renamed', () => {});
    };
    expectTypeOf(mistakes).toBeFunction();
    expectTypeOf(call<'llmConfig:getApiKeys'>).returns.resolves.toEqualTypeOf<ApiKey[]>();
  });
});
