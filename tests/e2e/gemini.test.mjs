// Google Gemini in the real window, against the fake provider speaking Gemini (its errors as Google
// writes them): the built-in provider; a Gemini provider added through Settings, its keys in quota
// groups; a chat that streams and says what it cost; the provider's models listed; a per-day 429
// that fails over and shows "Daily quota used up until …" for that model in the key table, in the
// user's time (the app runs in Europe/Berlin); an invalid key (400 API_KEY_INVALID, refused again
// for its model list) shown disabled with its reason, and the reply that had no key left saying
// why key by key; the Usage page counting the Gemini replies; and the local API serving the real
// `@google/genai` SDK through the pool: generateContent, a stream, the model list, a refused key
// failing over before the first byte, and the environment variables the examples name.
// Screenshots in light and dark; axe-core finds nothing on the pages shown.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GoogleGenAI } from '@google/genai';
import { By, freePort, launchApp, startFakeProvider } from './harness.mjs';
import { assertAccessible, assistantMessages, click, fresh, gone, keepPreferences, keyRow, retype, selectByText, send, textOf, waitFor } from './steps.mjs';

const TIME_ZONE = 'Europe/Berlin';
const MODEL = 'gemini-fake';
const KEY_A = 'AIza-fake-GEMINI-AAAAAAAA-0001';
const KEY_B = 'AIza-fake-GEMINI-BBBBBBBB-0002';
const KEY_C = 'AIza-fake-GEMINI-INVALID-0003';
const KEY_D = 'AIza-fake-GEMINI-DDDDDDDD-0004';
const PER_DAY = 'GenerateRequestsPerDayPerProjectPerModel-FreeTier';
const PER_MINUTE = 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier';
/** Every Gemini reply of the fake reports 11 input tokens (5 cached) and 2 thought tokens besides one per piece. */
const THOUGHTS = 2;
const FIRST_REPLY = ['Hello', ' from', ' Gemini', '.'];
const DEFAULT_REPLY = 'Hello from the fake provider.';

/**
 * The theme as Settings → General keeps it, then a reload: the app reopens on the same page (the
 * chat page on the latest chat; Settings → Providers on its first provider, so `reopen` goes back
 * to the one shown).
 */
async function useTheme(app, theme, reopen) {
  await keepPreferences(app, { theme });
  await reopen();
}

/** The text at `testId` inside the row of `label`, read afresh ('' when there is none). */
function inRow(app, label, testId) {
  return fresh(async () => {
    const found = await (await keyRow(app, label)).findElements(By.css(`[data-testid="${testId}"]`));
    return found.length === 0 ? '' : textOf(found[0]);
  });
}

/** Adds a key through the Add key dialog, in `group` when given. */
async function addKey(app, apiKey, label, group) {
  await click(app, 'add-key');
  await (await app.find('add-key-apikey-input')).sendKeys(apiKey);
  await (await app.find('add-key-label-input')).sendKeys(label);
  if (group) await (await app.find('add-key-quota-group-input')).sendKeys(group);
  await click(app, 'add-key-submit');
  await gone(app, 'add-key-dialog');
  await keyRow(app, label);
}

/** A time as the window shows it, in Europe/Berlin: `09:00` today, `Dec 2, 09:00` on another day. */
function berlinTime(at, now = Date.now()) {
  const day = (t) => new Intl.DateTimeFormat('en', { dateStyle: 'short', timeZone: TIME_ZONE }).format(t);
  const sameDay = day(at) === day(now);
  return new Intl.DateTimeFormat('en', {
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone: TIME_ZONE,
    ...(sameDay ? {} : { month: 'short', day: 'numeric' }),
  }).format(at);
}

/** The fake's log of completion requests (not model lists). */
async function completions(fake) {
  return (await fake.requests()).filter((r) => !r.path.endsWith('/models'));
}

async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('Google Gemini in the real window, and @google/genai through the local API', () => {
  let app;
  let fake;
  let providerId;
  let address;
  let token;
  let dayEnd;

  before(async () => {
    fake = await startFakeProvider();
    await fake.models([MODEL, 'gemini-fake-pro']);
    app = await launchApp({ env: { TZ: TIME_ZONE } });
    await app.find('app-shell');
  });
  after(async () => {
    await app?.stop();
    fake?.stop();
  });

  it('runs in the time zone it was given (the times below are Berlin’s)', async () => {
    const zone = await app.driver.executeScript('return Intl.DateTimeFormat().resolvedOptions().timeZone');
    assert.equal(zone, TIME_ZONE, 'TZ reaches the web view');
  });

  it('has Google Gemini built in, at the host root', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-providers');
    await click(app, 'provider-gemini');
    await waitFor(app, async () => textOf(await app.find('provider-base-url')), (t) => t === 'https://generativelanguage.googleapis.com', 'its base URL');
    assert.match(await textOf(await app.find('provider-settings')), /Google Gemini/, 'its kind is named');
  });

  it('adds a Gemini provider pointing at the fake through Settings, and keys in quota groups', async () => {
    await click(app, 'add-provider');
    await (await app.find('provider-name-input')).sendKeys('Fake Gemini');
    await selectByText(app, 'provider-kind-select', 'Google Gemini');
    assert.equal(await (await app.find('provider-baseurl-input')).getAttribute('placeholder'), 'https://generativelanguage.googleapis.com', 'the example is the host root');
    assert.equal(await (await app.find('provider-baseurl-input')).getAttribute('value'), 'https://generativelanguage.googleapis.com', 'choosing the kind filled in its default');
    await retype(await app.find('provider-baseurl-input'), fake.url);
    await (await app.find('provider-models-input')).sendKeys(MODEL);
    await click(app, 'add-provider-form-submit');
    await gone(app, 'add-provider-dialog');
    await waitFor(app, async () => textOf(await app.find('provider-base-url')), (t) => t === fake.url, 'the new provider is shown');
    const stored = (await app.invoke('llmConfig:getProviders')).value.find((p) => p.name === 'Fake Gemini');
    assert.deepEqual([stored.kind, stored.models], ['gemini', [MODEL]]);
    providerId = stored.id;

    await addKey(app, KEY_A, 'key A', 'project-a');
    await addKey(app, KEY_B, 'key B', 'project-b');
    await addKey(app, KEY_C, 'key C');
    assert.equal(await inRow(app, 'key A', 'key-quota-group'), 'Group: project-a', 'the row shows its group');
    assert.equal(await inRow(app, 'key C', 'key-quota-group'), '', 'a key in no group shows none');
    const keys = (await app.invoke('llmConfig:getApiKeys', { providerId })).value;
    assert.deepEqual(keys.map((k) => [k.label, k.quotaGroup]), [['key A', 'project-a'], ['key B', 'project-b'], ['key C', null]]);

    await selectByText(app, 'pool-group-filter-select', 'project-b');
    await waitFor(app, () => fresh(async () => Promise.all((await app.driver.findElements(By.css('[data-testid="key-label"]'))).map(textOf))), (l) => l.join() === 'key B', 'the filter shows the group’s keys');
    await selectByText(app, 'pool-group-filter-select', 'All groups');
    await keyRow(app, 'key C');
    // Key C is not a valid key: the provider refuses it whatever it asks, its model list included.
    await fake.script(KEY_C, [], { kind: 'invalid_key' });
  });

  it('lists the provider’s models from its models endpoint', async () => {
    await click(app, 'provider-edit');
    await click(app, 'provider-models-list');
    await waitFor(app, async () => (await app.find('provider-models-status')).getAttribute('data-state'), (s) => s === 'loaded', 'the models are listed');
    const listed = await fresh(async () => Promise.all((await app.driver.findElements(By.css('[data-testid="provider-models-panel"] li code'))).map(textOf)));
    assert.deepEqual(listed, [MODEL, 'gemini-fake-pro'], 'the models that generate content (not the fake’s embedding model), without the models/ prefix');
    await click(app, 'provider-form-cancel');
  });

  it('streams a chat reply and says what it cost, the cache and the thoughts counted', async () => {
    await click(app, 'nav-chat');
    await click(app, 'chat-new');
    await selectByText(app, 'new-chat-provider-select', 'Fake Gemini');
    await waitFor(app, async () => (await app.find('new-chat-model-status')).getAttribute('data-state'), (s) => s === 'loaded', 'the model list is fetched');
    await click(app, 'new-chat-submit');
    await gone(app, 'new-chat-dialog');
    await fake.script(KEY_A, [{ kind: 'slow', chunks: FIRST_REPLY, delay_ms: 150 }]);
    await send(app, 'Hello Gemini');
    await waitFor(
      app,
      async () => textOf(await app.driver.findElement(By.css('[data-testid="streaming-content"]'))),
      (t) => t.length > 0 && t !== FIRST_REPLY.join(''),
      'the reply streams in piece by piece',
    );
    await gone(app, 'streaming-reply');
    const [reply] = await assistantMessages(app);
    assert.equal(reply.status, 'complete');
    assert.match(reply.text, /Hello from Gemini\./);
    assert.equal(await textOf(await app.find('message-key')), 'Key: key A');
    const usage = await app.find('message-usage');
    assert.deepEqual(
      await Promise.all(['data-input', 'data-cached', 'data-output'].map((a) => usage.getAttribute(a))),
      ['11', '5', String(FIRST_REPLY.length + THOUGHTS)],
      'the reply’s usage, from usageMetadata',
    );
    assert.match(await textOf(usage), /Cached 5 of 11 input tokens, 6 out/);
    const [request] = await completions(fake);
    assert.deepEqual([request.path, request.key, request.stream], [`/v1beta/models/${MODEL}:streamGenerateContent`, KEY_A, true], 'the key went in its header, not the URL');
    await app.screenshot('gemini-chat-light');
  });

  it('fails over on a per-day 429 and shows the model used up until the provider’s day ends, in local time', async () => {
    await fake.script(KEY_A, [{ kind: 'quota_refused', quota_id: PER_DAY, retry_delay: '0s' }]);
    await send(app, 'Once more');
    await waitFor(app, () => assistantMessages(app), (r) => r.length === 2 && r[1].status === 'complete', 'the second reply is saved');
    assert.equal((await fresh(async () => Promise.all((await app.driver.findElements(By.css('[data-testid="message-key"]'))).map(textOf)))).at(-1), 'Key: key B');
    assert.deepEqual((await completions(fake)).slice(1).map((r) => r.key), [KEY_A, KEY_B], 'A was refused, B answered, before any text');

    const status = (await app.invoke('llmConfig:getPoolStatus', { providerId })).value;
    const a = status.keys.find((k) => k.label === 'key A');
    assert.equal(a.state, 'active', 'the key serves its other models');
    dayEnd = a.budgets.find((b) => b.scope === MODEL)?.usedUpUntil;
    assert.ok(dayEnd > status.now && dayEnd <= status.now + 25 * 3_600_000, `used up until within a day: ${JSON.stringify(a.budgets)}`);
    const inLosAngeles = new Intl.DateTimeFormat('en', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'America/Los_Angeles' }).format(dayEnd);
    assert.equal(inLosAngeles, '00:00', 'the day ends at midnight in Los Angeles');

    await click(app, 'nav-settings');
    await click(app, `provider-${providerId}`);
    const rest = await waitFor(app, () => inRow(app, 'key A', 'key-model-rest'), (t) => t.length > 0, 'key A’s model rests');
    assert.equal(rest, `${MODEL}Daily quota used up until ${berlinTime(dayEnd)}`, 'the model, and when its day ends in the user’s time');
    assert.equal(await inRow(app, 'key B', 'key-model-rest'), '', 'key B is another project: its day is not spent');
    const showTable = () => app.driver.executeScript('document.querySelector(\'[data-testid="api-key-pool"]\').scrollIntoView({ block: "start" })');
    await assertAccessible(app, 'the key table with a used-up model (light)');
    await showTable();
    await app.screenshot('gemini-key-table-daily-quota-light');
    const reopenPool = async () => {
      await click(app, `provider-${providerId}`);
      await waitFor(app, () => inRow(app, 'key A', 'key-model-rest'), (t) => t.length > 0, 'the pool is shown again');
    };
    await useTheme(app, 'dark', reopenPool);
    await assertAccessible(app, 'the key table with a used-up model (dark)');
    await showTable();
    await app.screenshot('gemini-key-table-daily-quota-dark');
    await useTheme(app, 'light', reopenPool);
  });

  it('disables an invalid key after its model list is refused too, and a reply with no key left says why, key by key', async () => {
    // Key B off by hand: key A's day is spent, so only key C is left to try.
    await (await keyRow(app, 'key B')).findElement(By.css('[data-testid="key-enabled"]')).click();
    await waitFor(app, async () => (await app.invoke('llmConfig:getApiKeys', { providerId })).value.find((k) => k.label === 'key B').enabled, (on) => on === false, 'key B is off');
    const before = (await fake.requests()).length;
    await click(app, 'nav-chat');
    await send(app, 'Anyone there?');
    const error = await waitFor(app, async () => textOf(await app.find('message-error-text')), (t) => t.length > 0, 'the reply fails');
    assert.ok(
      error.startsWith(`All keys are busy: key A: daily quota used up until ${berlinTime(dayEnd)}; key B is switched off; key C was disabled after a 400. `),
      `each key’s reason, the daily quota in local time: ${error}`,
    );
    assert.match(error, /The last answer was HTTP 400\. The provider said: “API key not valid/, 'and the provider’s words');
    const asked = (await fake.requests()).slice(before).map((r) => [r.key, r.path.endsWith('/models') ? 'models' : 'reply']);
    assert.deepEqual(asked, [[KEY_C, 'reply'], [KEY_C, 'models']], 'C was refused, then asked for its models before it was disabled');
    await assertAccessible(app, 'the chat with the failed reply (light)');
    await app.screenshot('gemini-chat-no-key-left-light');
    const reopenChat = () => app.find('message-error');
    await useTheme(app, 'dark', reopenChat);
    await assertAccessible(app, 'the chat with the failed reply (dark)');
    await app.screenshot('gemini-chat-no-key-left-dark');
    await useTheme(app, 'light', reopenChat);

    await click(app, 'chat-open-settings');
    await click(app, `provider-${providerId}`);
    const state = await waitFor(app, () => inRow(app, 'key C', 'key-state'), (t) => /^Disabled after 400 at \d\d:\d\d$/.test(t), 'key C is disabled with its reason');
    assert.match(state, /^Disabled after 400/);
    const c = (await app.invoke('llmConfig:getApiKeys', { providerId })).value.find((k) => k.label === 'key C');
    assert.deepEqual([c.enabled, c.disabledReason], [false, 'HTTP 400'], 'stored as disabled, with why');
    await (await keyRow(app, 'key B')).findElement(By.css('[data-testid="key-enabled"]')).click();
    await waitFor(app, async () => (await app.invoke('llmConfig:getApiKeys', { providerId })).value.find((k) => k.label === 'key B').enabled, (on) => on === true, 'key B is on again');
  });

  it('counts the Gemini replies on the Usage page as for the other kinds', async () => {
    await click(app, 'nav-usage');
    await app.find('usage-totals');
    const total = async (id) => textOf(await app.find(`usage-total-${id}-value`));
    assert.equal(await total('input'), '22', 'two answered replies, 11 input tokens each');
    assert.equal(await total('cached'), '10', '5 of each from the cache');
    assert.equal(await total('output'), String(FIRST_REPLY.length + THOUGHTS + 3 + THOUGHTS), 'the pieces and the thoughts of both');
    assert.equal(await total('rate-limited'), '1', 'key A’s per-day 429');
    const rows = await fresh(async () =>
      Promise.all((await app.driver.findElements(By.css('[data-testid="usage-key-row"]'))).map(async (row) => Promise.all((await row.findElements(By.css('th, td'))).map(textOf)))),
    );
    const byKey = Object.fromEntries(rows.map((r) => [r[1], r.slice(0, 8)]));
    assert.deepEqual(byKey['key A'].slice(0, 1), ['Fake Gemini'], 'the provider by name');
    assert.deepEqual(byKey['key B'].slice(5, 8), ['11', '5', '5'], 'key B’s reply: 3 pieces and 2 thoughts out');
  });

  it('serves @google/genai through the pool: generateContent, a stream and the model list', async () => {
    const port = await freePort();
    const configured = await app.invoke('localApi:configure', { enabled: true, port });
    assert.ok(configured.ok, JSON.stringify(configured.error));
    token = configured.value.token;
    address = `http://127.0.0.1:${port}`;
    await app.invoke('llmConfig:addApiKey', { providerId, apiKey: KEY_D, label: 'key D', quotaGroup: 'project-d' });
    for (const key of [KEY_B, KEY_D]) await fake.script(key, [], { kind: 'text', chunks: ['Hello', ' from ', 'the fake provider.'] });

    // As the examples write it: the host root, the local token as the key; the SDK's own version (v1).
    const ai = new GoogleGenAI({ apiKey: token, httpOptions: { baseUrl: address } });
    const direct = new GoogleGenAI({ apiKey: KEY_B, httpOptions: { baseUrl: fake.url, apiVersion: 'v1beta' } });
    const request = { model: MODEL, contents: 'Hello through Keypool', config: { systemInstruction: 'be brief' } };
    const via = await ai.models.generateContent(request);
    const straight = await direct.models.generateContent(request);
    assert.equal(via.text, DEFAULT_REPLY, 'the SDK reads the reply');
    assert.deepEqual([via.candidates, via.usageMetadata], [straight.candidates, straight.usageMetadata], 'as the provider wrote it');
    const seen = (await completions(fake)).at(-2);
    assert.equal(seen.path, `/v1beta/models/${MODEL}:generateContent`, 'upstream on v1beta');
    assert.ok([KEY_B, KEY_D].includes(seen.key), `a pooled key, not the local token: ${seen.key}`);

    const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents: 'A stream through Keypool' }));
    assert.equal(chunks.map((c) => c.text ?? '').join(''), DEFAULT_REPLY, 'the stream, piece by piece');
    assert.ok(chunks.length >= 3, `it came in pieces: ${chunks.length}`);
    assert.equal(chunks.at(-1).usageMetadata?.promptTokenCount, 11, 'with its usage at the end');

    const models = [];
    for await (const model of await ai.models.list()) models.push(model.name);
    // Listed and fetched alike: every model the app would offer for it (issue 28 §4).
    assert.deepEqual(models, [`models/${MODEL}`, 'models/gemini-fake-pro'], 'the models a Gemini provider with keys serves');
    const beta = new GoogleGenAI({ apiKey: token, httpOptions: { baseUrl: address, apiVersion: 'v1beta' } });
    assert.equal((await beta.models.generateContent(request)).text, DEFAULT_REPLY, 'v1beta is served too');
  });

  it('fails a refused key over to another before the first byte of a stream', async () => {
    const ai = new GoogleGenAI({ apiKey: token, httpOptions: { baseUrl: address } });
    const turn = (text) => ({ role: 'user', parts: [{ text }] });
    const start = [turn('A conversation about failover')];
    await ai.models.generateContent({ model: MODEL, contents: start });
    const bound = (await completions(fake)).at(-1).key;
    const other = bound === KEY_B ? KEY_D : KEY_B;
    await fake.script(bound, [{ kind: 'quota_refused', quota_id: PER_MINUTE, retry_delay: '30s' }]);
    const before = (await completions(fake)).length;
    const contents = [...start, { role: 'model', parts: [{ text: 'ok' }] }, turn('and again')];
    const chunks = await collect(await ai.models.generateContentStream({ model: MODEL, contents }));
    assert.equal(chunks.map((c) => c.text ?? '').join(''), DEFAULT_REPLY, 'the client gets the other key’s stream, whole');
    assert.deepEqual((await completions(fake)).slice(before).map((r) => r.key), [bound, other], 'the bound key was refused, the other answered');
  });

  it('refuses a wrong token in Google’s words, and works from the environment variables the examples name', async () => {
    const wrong = new GoogleGenAI({ apiKey: 'kp-local-not-the-token', httpOptions: { baseUrl: address } });
    await assert.rejects(wrong.models.generateContent({ model: MODEL, contents: 'hi' }), (error) => {
      assert.equal(error.status, 401, `Google's 401: ${error.message}`);
      assert.match(error.message, /UNAUTHENTICATED|local API token/, error.message);
      return true;
    });
    const saved = { base: process.env.GOOGLE_GEMINI_BASE_URL, key: process.env.GEMINI_API_KEY };
    try {
      process.env.GOOGLE_GEMINI_BASE_URL = address;
      process.env.GEMINI_API_KEY = token;
      const fromEnv = new GoogleGenAI({});
      assert.equal((await fromEnv.models.generateContent({ model: MODEL, contents: 'from the environment' })).text, DEFAULT_REPLY);
    } finally {
      for (const [name, value] of [['GOOGLE_GEMINI_BASE_URL', saved.base], ['GEMINI_API_KEY', saved.key]]) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('shows the Google Gen AI examples in Settings → Local API, clean under axe', async () => {
    await click(app, 'nav-settings');
    await click(app, 'settings-localApi');
    // The section may still be settling as it opens (a click on a tab it then renders anew is
    // lost): the tab is clicked again until it is the chosen one, as a user would.
    const code = await waitFor(
      app,
      async () => {
        const tab = await app.find('local-api-snippet-tab-geminiJs');
        if ((await tab.getAttribute('aria-selected')) !== 'true') await tab.click();
        return textOf(await app.find('local-api-snippet-code'));
      },
      (t) => t.includes('GoogleGenAI'),
      'the Gemini example',
    );
    assert.ok(code.includes(`new GoogleGenAI({ apiKey: "<your token>", httpOptions: { baseUrl: "${address}" } })`), code);
    await assertAccessible(app, 'Settings → Local API with the Gemini example', '[data-testid="local-api-section"]');
    await app.screenshot('settings-local-api-gemini-light');
  });
});
