// The llmConfig commands called from the real page through invoke, as the UI calls them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launchApp } from './harness.mjs';

const SECRET = 'sk-e2e-QQQQQQQQQQQQQQQQQQQQQQQQ7777';

describe('llmConfig commands in the real window', () => {
  let app;
  before(async () => {
    app = await launchApp();
    await app.find('app-shell');
  });
  after(async () => app?.stop());

  async function ok(command, args) {
    const result = await app.invoke(command, args);
    assert.ok(result.ok, `${command} ${JSON.stringify(args)} must succeed: ${JSON.stringify(result.error)}`);
    return result.value;
  }

  async function rejected(command, args, code, path) {
    const result = await app.invoke(command, args);
    assert.equal(result.ok, false, `${command} ${JSON.stringify(args)} must be rejected`);
    assert.equal(result.error.code, code, `${command}: ${JSON.stringify(result.error)}`);
    if (path !== undefined) {
      assert.ok(
        result.error.issues.some((issue) => issue.path === path),
        `${command}: an issue at ${path}: ${JSON.stringify(result.error.issues)}`,
      );
    }
    return result.error;
  }

  it('adds, lists, updates, toggles, reorders and deletes keys', async () => {
    assert.deepEqual(await ok('llmConfig:getApiKeys', { providerId: 'openai' }), [], 'the pool starts empty');

    const a = await ok('llmConfig:addApiKey', { providerId: 'openai', apiKey: SECRET, label: 'prod', weight: 3 });
    assert.equal(a.apiKeyPreview, 'sk-…7777', 'the key comes back masked');
    assert.equal(a.weight, 3);
    assert.equal(a.enabled, true, 'enabled by default');
    assert.equal(JSON.stringify(a).includes('QQQQQQQQ'), false, 'no part of the secret is returned');

    const b = await ok('llmConfig:addApiKey', { providerId: 'openai', apiKey: '$OPENAI_TEAM_KEY' });
    assert.equal(b.apiKeyPreview, '$OPENAI_TEAM_KEY', 'an env reference is shown as written');
    assert.equal(b.isEnvRef, true);

    const updated = await ok('llmConfig:updateApiKey', { id: a.id, weight: 5, label: 'production' });
    assert.equal(updated.weight, 5, 'the new weight is stored');
    assert.equal(updated.label, 'production', 'the new label is stored');

    const toggled = await ok('llmConfig:toggleApiKey', { id: a.id, enabled: false });
    assert.equal(toggled.enabled, false, 'the key is off');

    const reordered = await ok('llmConfig:reorderApiKeys', { providerId: 'openai', ids: [b.id, a.id] });
    assert.deepEqual(reordered.keys.map((k) => k.id), [b.id, a.id], 'the new order is returned');
    assert.ok(reordered.generation > toggled.generation, 'each write gets a newer generation');

    const status = await ok('llmConfig:getPoolStatus', { providerId: 'openai' });
    assert.deepEqual(status.keys.map((k) => k.state), ['active', 'disabled'], 'the pool sees the toggle');
    const reset = await ok('llmConfig:resetCooldown', { id: b.id });
    assert.equal(reset.id, b.id);
    assert.ok(reset.generation > reordered.generation, 'a cooldown ended is told as a change of its own');

    const deleted = await ok('llmConfig:deleteApiKey', { id: a.id });
    assert.equal(deleted.id, a.id, 'delete returns the id');
    assert.ok(deleted.generation > reset.generation, 'and its write’s generation');
    const left = await ok('llmConfig:getApiKeys', { providerId: 'openai' });
    assert.deepEqual(left.map((k) => k.id), [b.id], 'only the other key is left');
  });

  it('rejects bad input with structured errors and writes nothing', async () => {
    const before = await ok('llmConfig:getApiKeys', { providerId: 'anthropic' });
    await rejected('llmConfig:addApiKey', { providerId: 'anthropic', apiKey: SECRET, weight: 0 }, 'validation', 'weight');
    await rejected('llmConfig:addApiKey', { providerId: 'anthropic', apiKey: SECRET, weight: 1.5 }, 'validation', 'weight');
    await rejected('llmConfig:addApiKey', { providerId: 'anthropic', apiKey: SECRET, weight: '3' }, 'validation', 'weight');
    await rejected('llmConfig:addApiKey', { providerId: 'anthropic', apiKey: '   ' }, 'validation', 'apiKey');
    await rejected('llmConfig:addApiKey', { providerId: 'anthropic', apiKey: SECRET, extra: 1 }, 'validation', 'extra');
    await rejected('llmConfig:addApiKey', { providerId: 'nobody', apiKey: SECRET }, 'not_found');
    await rejected('llmConfig:toggleApiKey', { id: 'no-such-id', enabled: true }, 'not_found');
    await rejected('llmConfig:updateApiKey', { id: 'no-such-id' }, 'validation', '');
    const error = await rejected('llmConfig:deleteApiKey', { id: '' }, 'validation', 'id');
    assert.equal(typeof error.message, 'string', 'every error has a message');
    assert.deepEqual(await ok('llmConfig:getApiKeys', { providerId: 'anthropic' }), before, 'nothing was added');
  });

  it('emits llmConfig:changed with the provider and the write’s generation after a write', async () => {
    const seen = await app.driver.executeAsyncScript(`
      const done = arguments[arguments.length - 1];
      const internals = window.__TAURI_INTERNALS__;
      let event = null;
      let answer = null;
      const both = () => event && answer && done({ event, answer });
      const handler = internals.transformCallback((heard) => {
        event = heard.payload;
        both();
      });
      internals.invoke('plugin:event|listen', { event: 'llmConfig:changed', target: { kind: 'Any' }, handler })
        .then(() => internals.invoke('llmConfig:addApiKey', { providerId: 'local', apiKey: 'sk-local-event-key-0001' }))
        .then((added) => {
          answer = added;
          both();
        })
        .catch((error) => done({ error }));
    `);
    assert.equal(typeof seen.answer?.generation, 'number', `the answer carries its write's generation: ${JSON.stringify(seen)}`);
    assert.deepEqual(seen.event, { providerId: 'local', generation: seen.answer.generation }, 'the UI learns which provider changed, and by which write');
  });
});
