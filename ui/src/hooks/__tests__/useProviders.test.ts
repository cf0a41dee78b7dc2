import { renderHook, waitFor } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createFakeBackend, type FakeBackend } from '../../test/fakeBackend';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({ invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args) }));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { useProviders } = await import('../useProviders');

describe('useProviders', () => {
  beforeEach(() => {
    backend = createFakeBackend();
  });

  it('reads the providers, then follows every llmConfig:changed', async () => {
    const { result } = renderHook(() => useProviders());
    expect(result.current.providers, 'none until they are read').toEqual([]);
    await waitFor(() => expect(result.current.providers.map((p) => p.name)).toEqual(['OpenAI', 'Anthropic']));

    await backend.invoke('llmConfig:addProvider', { name: 'Gateway', kind: 'openai', baseUrl: 'https://proxy.example' });
    await waitFor(() => expect(result.current.providers.map((p) => p.name), 'a provider added elsewhere shows up').toEqual(['OpenAI', 'Anthropic', 'Gateway']));

    backend.add('openai', 'sk-follow-0001');
    backend.emit('openai');
    await waitFor(() => expect(result.current.providers[0].keyCount, 'a key added to a pool counts').toBe(1));
  });

  it('keeps the list it has when a later read fails', async () => {
    const { result } = renderHook(() => useProviders());
    await waitFor(() => expect(result.current.state.kind).toBe('loaded'));
    backend.rejectNext('llmConfig:getProviders', { code: 'storage', message: 'the database failed' });
    backend.emit('openai');
    await waitFor(() => expect(backend.callsOf('llmConfig:getProviders')).toHaveLength(2));
    expect(result.current.providers.map((p) => p.name), 'still the providers read before').toEqual(['OpenAI', 'Anthropic']);
  });
});
