// The local API in the real window, driven by the official SDKs (`openai`, `@anthropic-ai/sdk`)
// against the fake provider: Settings → Local API turns it on on a free port and shows the token
// once; the SDKs then get exactly what the provider sends (whole and streamed), never see a 429 or
// 401 that the pool absorbed, pass tools and images through untouched, keep a conversation on one
// key; a wrong or missing token, a web page (Origin) and an unknown model are refused in each
// dialect's own terms; a port another program holds is reported in place. Screenshots in light
// and dark.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { Key } from 'selenium-webdriver';
import { By, freePort, launchApp, startFakeProvider } from './harness.mjs';
import { click, fresh, gone, retype, textOf, waitFor } from './steps.mjs';

const OPENAI_KEYS = ['sk-fake-OPENAI-AAAAAAAAAAAA-0001', 'sk-fake-OPENAI-BBBBBBBBBBBB-0002'];
const ANTHROPIC_KEYS = ['sk-ant-fake-CCCCCCCCCCCC-0003', 'sk-ant-fake-DDDDDDDDDDDD-0004'];
const GPT = 'gpt-fake';
const CLAUDE = 'claude-fake';
const REPLY = ['Hello', ' from', ' the', ' pool.'];

const textAt = (app, testId) => fresh(async () => textOf(await app.find(testId)));

/** Another program holding a port on 127.0.0.1, until closed. */
function occupyPort() {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok(server));
  });
}

/** Saves `port` in the port field and waits until the section says it saved. */
async function savePort(app, port) {
  const input = await app.find('local-api-port-input');
  await retype(input, String(port));
  await input.sendKeys(Key.ENTER);
  await waitFor(app, () => textAt(app, 'local-api-port-status'), (t) => t === 'Saved.', `port ${port} is saved`);
}

const state = (app) => fresh(async () => (await app.find('local-api-state')).getAttribute('data-state'));

/** The fake's log of completion requests (not model lists). */
async function completions(fake) {
  return (await fake.requests()).filter((r) => !r.path.endsWith('/models'));
}

/** Every event of an SDK stream, as parsed by the SDK. */
async function collect(stream) {
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** Asserts `promise` rejects with an instance of `type` (an SDK error class) and `status`. */
async function rejectsWith(promise, type, status, why) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof type, `${why}: ${type.name} expected, got ${error?.constructor?.name}: ${error?.message}`);
    assert.equal(error.status, status, why);
    return true;
  });
}

describe('the local API, with the official SDKs, in the real window', () => {
  let app;
  let fake;
  let port;
  let address;
  let token;
  /** SDK clients: through Keypool with the local token, and straight to the fake with a provider key. */
  let openai;
  let anthropic;
  let directOpenai;
  let directAnthropic;

  before(async () => {
    fake = await startFakeProvider();
    app = await launchApp();
    await app.find('app-shell');
    for (const [name, kind, baseUrl, model, keys] of [
      ['Fake OpenAI', 'openai', `${fake.url}/v1`, GPT, OPENAI_KEYS],
      ['Fake Anthropic', 'anthropic', fake.url, CLAUDE, ANTHROPIC_KEYS],
    ]) {
      const provider = await app.invoke('llmConfig:addProvider', { name, kind, baseUrl, models: [model] });
      assert.ok(provider.ok, `addProvider ${name}: ${JSON.stringify(provider.error)}`);
      for (const [index, apiKey] of keys.entries()) {
        const key = await app.invoke('llmConfig:addApiKey', { providerId: provider.value.id, apiKey, label: `${name} key ${index + 1}` });
        assert.ok(key.ok, `addApiKey: ${JSON.stringify(key.error)}`);
      }
    }
    for (const key of [...OPENAI_KEYS, ...ANTHROPIC_KEYS]) await fake.script(key, [], { kind: 'text', chunks: REPLY });
    directOpenai = new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: OPENAI_KEYS[0], maxRetries: 0 });
    directAnthropic = new Anthropic({ baseURL: fake.url, apiKey: ANTHROPIC_KEYS[0], maxRetries: 0 });
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('is turned on in Settings → Local API on a free port, and shows its token once', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    assert.equal(await state(app), 'off', 'off by default');
    const switchButton = await app.find('local-api-switch');
    assert.equal(await switchButton.getAttribute('aria-checked'), 'false');
    port = await freePort();
    await savePort(app, port);
    await click(app, 'local-api-switch');

    const dialog = await app.find('local-api-token-dialog');
    assert.equal(await dialog.getAttribute('role'), 'dialog');
    token = await (await app.find('local-api-token')).getAttribute('value');
    assert.match(token, /^kp-local-[0-9a-f]{64}$/, 'a fresh token');
    const warning = await textAt(app, 'local-api-token-warning');
    assert.match(warning, /it will not be shown again/, 'the dialog warns it is shown once');
    const focused = await app.driver.executeScript('return document.activeElement?.dataset.testid');
    assert.equal(focused, 'local-api-token', 'the token has the focus');
    await app.screenshot('settings-local-api-token-light');
    await click(app, 'local-api-token-done');
    await gone(app, 'local-api-token-dialog');

    await waitFor(app, () => state(app), (s) => s === 'running', 'the endpoint is up');
    address = await textAt(app, 'local-api-address');
    assert.equal(address, `http://127.0.0.1:${port}`, 'the address, on the chosen port');
    const page = await app.driver.executeScript('return document.body.textContent');
    assert.ok(!page.includes(token), 'the token is nowhere on the page once its dialog closed');
    const snippet = await textAt(app, 'local-api-snippet-code');
    assert.ok(snippet.includes(`base_url="${address}/v1"`) && snippet.includes('api_key="<your token>"'), `examples name the real address, not the token: ${snippet}`);

    openai = new OpenAI({ baseURL: `${address}/v1`, apiKey: token, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: address, apiKey: token, maxRetries: 0 });
    if (typeof app.axe === 'function') {
      const violations = await app.axe('[data-testid="local-api-section"]');
      assert.deepEqual(violations, [], 'axe-core finds no WCAG 2.1 A/AA violation in the section');
    }
    await app.screenshot('settings-local-api-light');
  });

  it('answers whole replies exactly as the provider sends them, in both dialects', async () => {
    const chat = { model: GPT, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'whole, openai' }] };
    const via = await openai.chat.completions.create(chat);
    const direct = await directOpenai.chat.completions.create(chat);
    assert.deepEqual(via, direct, 'the OpenAI SDK parses the same completion');
    assert.equal(via.choices[0].message.content, REPLY.join(''));

    const message = { model: CLAUDE, max_tokens: 64, system: 'be brief', messages: [{ role: 'user', content: 'whole, anthropic' }] };
    const viaMessage = await anthropic.messages.create(message);
    const directMessage = await directAnthropic.messages.create(message);
    assert.deepEqual(viaMessage, directMessage, 'the Anthropic SDK parses the same message');
    assert.equal(viaMessage.content[0].text, REPLY.join(''));

    const counted = await anthropic.messages.countTokens({ model: CLAUDE, messages: message.messages });
    assert.deepEqual(counted, await directAnthropic.messages.countTokens({ model: CLAUDE, messages: message.messages }), 'count_tokens is passed through');
  });

  it('streams replies event for event, with the same deltas and event types', async () => {
    const chat = { model: GPT, stream: true, messages: [{ role: 'user', content: 'streamed, openai' }] };
    const via = await collect(await openai.chat.completions.create(chat));
    const direct = await collect(await directOpenai.chat.completions.create(chat));
    assert.deepEqual(via, direct, 'the same chunks, in order');
    assert.equal(via.map((c) => c.choices[0]?.delta?.content ?? '').join(''), REPLY.join(''), 'the deltas make the reply');
    assert.ok(via.length > REPLY.length, 'it came in pieces, with its finish');

    const message = { model: CLAUDE, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'streamed, anthropic' }] };
    const viaEvents = await collect(await anthropic.messages.create(message));
    const directEvents = await collect(await directAnthropic.messages.create(message));
    assert.deepEqual(viaEvents, directEvents, 'the same events, in order');
    assert.deepEqual(
      viaEvents.map((e) => e.type),
      ['message_start', 'content_block_start', ...REPLY.map(() => 'content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop'],
      'event types as Anthropic streams them',
    );
    assert.equal(viaEvents.map((e) => e.delta?.text ?? '').join(''), REPLY.join(''));
  });

  it('passes tool calls and images upstream untouched, byte for byte', async () => {
    const chat = {
      model: GPT,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in this picture? look it up' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==', detail: 'low' } },
          ],
        },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '{"answer":"a cat"}' },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks a thing up', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      parallel_tool_calls: false,
      temperature: 0.25,
    };
    await openai.chat.completions.create(chat);
    const seen = (await completions(fake)).at(-1);
    assert.equal(seen.path, '/v1/chat/completions');
    assert.equal(seen.body, JSON.stringify(chat), 'the body the SDK sent reached the provider unchanged');

    const message = {
      model: CLAUDE,
      max_tokens: 64,
      tools: [{ name: 'lookup', description: 'Looks a thing up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
      tool_choice: { type: 'tool', name: 'lookup' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAANSUhEUg==' } },
            { type: 'text', text: 'what is this?' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'cat' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a cat' }] },
      ],
    };
    await anthropic.messages.create(message);
    const seenMessage = (await completions(fake)).at(-1);
    assert.equal(seenMessage.path, '/v1/messages');
    assert.equal(seenMessage.body, JSON.stringify(message), 'the Anthropic body reached the provider unchanged');
    assert.ok(seenMessage.anthropic_version, 'with the anthropic-version header the SDK sent');
  });

  it('keeps a conversation on its key by the hash of its start, and sends another conversation to another key', async () => {
    const start = [
      { role: 'system', content: 'You review pull requests.' },
      { role: 'user', content: 'Review PR 41, please.' },
    ];
    await openai.chat.completions.create({ model: GPT, messages: start });
    const firstKey = (await completions(fake)).at(-1).key;
    await openai.chat.completions.create({
      model: GPT,
      messages: [...start, { role: 'assistant', content: 'Looks fine.' }, { role: 'user', content: 'And the tests?' }],
    });
    assert.equal((await completions(fake)).at(-1).key, firstKey, 'the second turn uses the first turn’s key');

    await openai.chat.completions.create({ model: GPT, messages: [{ role: 'system', content: 'You write poems.' }, { role: 'user', content: 'One about rain.' }] });
    const otherKey = (await completions(fake)).at(-1).key;
    assert.notEqual(otherKey, firstKey, 'a different conversation goes to the other key of the pool');
    assert.ok(OPENAI_KEYS.includes(otherKey));
  });

  it('fails over on a 429 and on a 401 before the client sees anything', async () => {
    // A conversation bound to a key, whose next turn meets a 429 on that key.
    const start = [{ role: 'user', content: 'failover, openai' }];
    await openai.chat.completions.create({ model: GPT, messages: start });
    const bound = (await completions(fake)).at(-1).key;
    await fake.script(bound, [{ kind: 'status', status: 429, headers: [['retry-after', '1']], message: 'rate limited' }]);
    const before = (await completions(fake)).length;
    const reply = await openai.chat.completions.create({ model: GPT, messages: [...start, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'again' }] });
    assert.equal(reply.choices[0].message.content, REPLY.join(''), 'the client gets the reply, not the 429');
    const tried = (await completions(fake)).slice(before).map((r) => r.key);
    assert.deepEqual(tried, [bound, OPENAI_KEYS.find((k) => k !== bound)], 'the bound key was refused, the other answered');

    // The same with a 401 on Anthropic's side, streamed.
    const message = { model: CLAUDE, max_tokens: 64, messages: [{ role: 'user', content: 'failover, anthropic' }] };
    await anthropic.messages.create(message);
    const boundClaude = (await completions(fake)).at(-1).key;
    // Revoked: refused for its model list too, which the pool asks before disabling it.
    await fake.script(boundClaude, [], { kind: 'status', status: 401, message: 'invalid x-api-key' });
    const beforeClaude = (await completions(fake)).length;
    const events = await collect(
      await anthropic.messages.create({ ...message, stream: true, messages: [...message.messages, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'again' }] }),
    );
    assert.equal(events.map((e) => e.delta?.text ?? '').join(''), REPLY.join(''), 'the stream is the other key’s reply, whole');
    const triedClaude = (await completions(fake)).slice(beforeClaude).map((r) => r.key);
    assert.deepEqual(triedClaude, [boundClaude, ANTHROPIC_KEYS.find((k) => k !== boundClaude)], 'the refused key, then the other');
    await fake.script(boundClaude, [], { kind: 'text', chunks: REPLY });
  });

  it('refuses a wrong or missing token with the SDKs’ AuthenticationError, and a web page with 403', async () => {
    const wrongOpenai = new OpenAI({ baseURL: `${address}/v1`, apiKey: 'kp-local-not-the-token', maxRetries: 0 });
    await rejectsWith(wrongOpenai.chat.completions.create({ model: GPT, messages: [{ role: 'user', content: 'hi' }] }), OpenAI.AuthenticationError, 401, 'OpenAI, wrong token');
    const wrongAnthropic = new Anthropic({ baseURL: address, apiKey: 'kp-local-not-the-token', maxRetries: 0 });
    await rejectsWith(wrongAnthropic.messages.create({ model: CLAUDE, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }), Anthropic.AuthenticationError, 401, 'Anthropic, wrong token');

    // No token at all: the SDKs' own way to send a request without one.
    const noTokenOpenai = new OpenAI({ baseURL: `${address}/v1`, apiKey: 'unused', defaultHeaders: { Authorization: null }, maxRetries: 0 });
    await rejectsWith(noTokenOpenai.models.list(), OpenAI.AuthenticationError, 401, 'OpenAI, no token');
    const noToken = await fetch(`${address}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: CLAUDE, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(noToken.status, 401, 'Anthropic path, no token');
    assert.equal((await noToken.json()).error.type, 'authentication_error', 'in Anthropic’s words');

    const fromPage = await fetch(`${address}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, origin: 'https://evil.example' },
      body: JSON.stringify({ model: GPT, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(fromPage.status, 403, 'a request from a web page is refused even with the token');
    const reached = (await completions(fake)).filter((r) => r.last_user === 'hi');
    assert.deepEqual(reached, [], 'none of these reached the provider');
  });

  it('answers an unknown model with a 404 in each dialect (the SDKs’ NotFoundError)', async () => {
    await rejectsWith(openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }), OpenAI.NotFoundError, 404, 'OpenAI');
    await rejectsWith(anthropic.messages.create({ model: 'no-such-model', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }), Anthropic.NotFoundError, 404, 'Anthropic');
    // Every model the app would offer for a provider that can answer: listed, default or fetched;
    // the built-in Local needs no key, the built-in OpenAI has none and is left out.
    const ids = (await openai.models.list()).data.map((m) => m.id);
    assert.ok(ids.includes(GPT), `the OpenAI list names the OpenAI-compatible provider's model: ${ids}`);
    assert.ok(ids.includes('llama3.2'), `and the keyless local server's: ${ids}`);
    assert.ok(!ids.includes('gpt-5-mini'), `but none of a provider without keys: ${ids}`);
    const claudes = (await anthropic.models.list()).data.map((m) => m.id);
    assert.ok(claudes.includes(CLAUDE), `the Anthropic list, in its own format: ${claudes}`);
    assert.ok(!claudes.includes(GPT) && !claudes.includes('claude-sonnet-4-6'), `only what Anthropic's clients can be answered for: ${claudes}`);
  });

  it('shows the live counts the backend keeps, a stream in flight included', async () => {
    const status = await app.invoke('localApi:getStatus');
    assert.ok(status.ok);
    const { requests, failed } = status.value;
    assert.ok(requests >= 20 && failed >= 7, `requests and failures were counted: ${JSON.stringify(status.value)}`);
    await waitFor(app, () => textAt(app, 'local-api-requests'), (t) => Number(t.replace(/\D/g, '')) === requests, 'the section shows the requests');
    assert.equal(Number((await textAt(app, 'local-api-failed')).replace(/\D/g, '')), failed, 'and the failures');
    assert.equal(await textAt(app, 'local-api-in-flight'), '0', 'nothing in flight');

    // A conversation's next turn held by the provider mid-stream: in flight until it ends.
    const start = [{ role: 'user', content: 'in flight' }];
    await openai.chat.completions.create({ model: GPT, messages: start });
    const bound = (await completions(fake)).at(-1).key;
    await fake.script(bound, [{ kind: 'hold', chunks_before: ['Partial'], gate: 'in-flight', chunks_after: [' and the rest.'] }]);
    const stream = await openai.chat.completions.create({ model: GPT, stream: true, messages: [...start, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }] });
    const chunks = stream[Symbol.asyncIterator]();
    assert.equal((await chunks.next()).value.choices[0].delta.content, 'Partial', 'the first piece arrived');
    await waitFor(app, () => textAt(app, 'local-api-in-flight'), (t) => t === '1', 'the section shows the stream in flight');
    await fake.release('in-flight');
    const rest = [];
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) rest.push(next.value.choices[0]?.delta?.content ?? '');
    assert.equal(rest.join(''), ' and the rest.', 'the stream ended whole');
    await waitFor(app, () => textAt(app, 'local-api-in-flight'), (t) => t === '0', 'and is no longer in flight');
  });

  it('regenerates the token after asking: the old one stops working at once', async () => {
    await click(app, 'local-api-regenerate');
    const ask = await app.find('local-api-regenerate-dialog');
    assert.equal(await ask.getAttribute('role'), 'alertdialog');
    await click(app, 'local-api-regenerate-confirm');
    const renewedToken = await waitFor(
      app,
      async () => (await app.find('local-api-token')).getAttribute('value'),
      (v) => /^kp-local-[0-9a-f]{64}$/.test(v),
      'the new token is shown',
    );
    assert.notEqual(renewedToken, token, 'a new token');
    token = renewedToken;
    await click(app, 'local-api-token-done');
    await gone(app, 'local-api-token-dialog');
    await rejectsWith(openai.models.list(), OpenAI.AuthenticationError, 401, 'the old token');
    const renewed = new OpenAI({ baseURL: `${address}/v1`, apiKey: renewedToken, maxRetries: 0 });
    assert.ok((await renewed.models.list()).data.some((m) => m.id === GPT), 'the new token works');
  });

  it('stays on its port when moved to one another program holds, says so in place, and moves to a free one', async () => {
    const other = await occupyPort();
    try {
      const busy = other.address().port;
      const field = await app.find('local-api-port-input');
      await retype(field, String(busy));
      await field.sendKeys(Key.ENTER);
      const error = await waitFor(app, () => textAt(app, 'local-api-port-error').catch(() => ''), (t) => t !== '', 'the port is said to be in use');
      assert.equal(error, `Port ${busy} is in use by another program: the local API goes on serving on port ${port}. Choose another port to move it.`);
      assert.equal(await state(app), 'running', 'a mistyped port does not stop the endpoint');
      assert.equal(await textAt(app, 'local-api-address'), address, 'it serves where it was');
      const kept = new OpenAI({ baseURL: `${address}/v1`, apiKey: token, maxRetries: 0 });
      assert.ok((await kept.models.list()).data.some((m) => m.id === GPT), 'the old port still answers');
      assert.equal(await textAt(app, 'local-api-port-status'), '', 'no green "Saved." beside the red "in use"');
      const input = await app.find('local-api-port-input');
      assert.equal(await input.getAttribute('value'), String(port), 'the field shows the port it serves on');
      assert.equal(await input.getAttribute('aria-invalid'), 'true', 'the field is marked');
      if (typeof app.axe === 'function') {
        assert.deepEqual(await app.axe('[data-testid="local-api-section"]'), [], 'axe-core finds no violation with the error shown');
      }
      await app.screenshot('settings-local-api-port-in-use-light');

      await click(app, 'settings-general');
      await fresh(async () => (await app.find('theme-select')).findElement(By.xpath('.//option[@value="dark"]')).click());
      await click(app, 'settings-localApi');
      await app.find('local-api-port-error');
      await app.screenshot('settings-local-api-port-in-use-dark');
    } finally {
      other.close();
    }
    port = await freePort();
    await savePort(app, port);
    await waitFor(app, () => textAt(app, 'local-api-address'), (a) => a === `http://127.0.0.1:${port}`, 'moved to a free port');
    assert.equal(await state(app), 'running', 'and running there');
    assert.equal(await textAt(app, 'local-api-address'), `http://127.0.0.1:${port}`);
    await gone(app, 'local-api-port-error');
    await app.screenshot('settings-local-api-dark');
    await click(app, 'local-api-snippet-tab-env');
    const code = await textAt(app, 'local-api-snippet-code');
    assert.ok(code.includes(`export OPENAI_BASE_URL=http://127.0.0.1:${port}/v1`) && code.includes(`export ANTHROPIC_BASE_URL=http://127.0.0.1:${port}\n`), `the environment example follows the new port: ${code}`);
    await app.driver.executeScript('document.querySelector(\'[data-testid="local-api-snippet"]\').scrollIntoView({ block: "end" })');
    await app.screenshot('settings-local-api-examples-dark');
  });
});
