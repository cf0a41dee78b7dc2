import { describe, expect, it } from 'vitest';
import type { Chat } from '../../../ipc/bindings';
import { provider } from '../../../test/fakeBackend';
import { initialModel, preferredProvider } from '../models';

const chat = (providerId: string | null, updatedAt: number): Chat =>
  ({ id: `c${updatedAt}`, title: 't', providerId, model: 'm', systemPrompt: null, createdAt: 0, updatedAt }) as Chat;

describe('what a new chat preselects', () => {
  const openai = provider('openai', 'OpenAI', { answerable: false });
  const anthropic = provider('anthropic', 'Anthropic', { answerable: true });
  const local = provider('local', 'Local', { answerable: true, local: true });

  it('the provider of the latest chat when it can answer', () => {
    expect(preferredProvider([openai, anthropic, local], [chat('anthropic', 1), chat('local', 5)])?.id, 'the latest chat is Local’s').toBe('local');
  });

  it('else the first provider that can answer, never one without keys first', () => {
    expect(preferredProvider([openai, anthropic, local], [chat('openai', 9)])?.id, 'OpenAI has no keys').toBe('anthropic');
    expect(preferredProvider([openai, anthropic], [])?.id, 'no chats yet').toBe('anthropic');
  });

  it('the first time, a provider with the user’s keys before a keyless local server', () => {
    const keyed = provider('anthropic', 'Anthropic', { answerable: true, keyCount: 2 });
    const keyless = provider('local', 'Local', { answerable: true, local: true, keyCount: 0, apiKeyPreview: null });
    expect(preferredProvider([keyless, keyed], [])?.id, 'Local is listed first, yet Anthropic has keys').toBe('anthropic');
    expect(preferredProvider([keyless, { ...keyed, answerable: false }], [])?.id, 'no key can answer: the local server').toBe('local');
    expect(preferredProvider([keyless, keyed], [chat('local', 4)])?.id, 'once chatted with, the local server stays').toBe('local');
  });

  it('else the last one used, else the first', () => {
    const none = [openai, { ...anthropic, answerable: false }];
    expect(preferredProvider(none, [chat('anthropic', 1)])?.id, 'nothing can answer: the one last used').toBe('anthropic');
    expect(preferredProvider(none, [chat('deleted', 3)])?.id, 'a deleted provider is skipped').toBe('openai');
    expect(preferredProvider([], []), 'no providers: none').toBeUndefined();
  });

  it('a provider’s only model when it has no default', () => {
    expect(initialModel(provider('x', 'X', { models: ['only-one'], defaultModel: null })), 'the one it lists').toBe('only-one');
    expect(initialModel(provider('x', 'X', { models: ['a', 'b'], defaultModel: 'b' })), 'its default first').toBe('b');
  });
});
