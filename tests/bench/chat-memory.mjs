// The memory a long chat's messages keep once shown, alone (the figures `npm run bench:app` takes
// among the others, the same way): a 1 000-message chat written through the real chat path,
// opened from the chat list at its end, scrolled up a page at a time to its first message and
// back down to its last (chat-scroll.mjs); then a second one as long, the same way. Against any
// build, under Xvfb:
//   KEYPOOL_APP_BINARY=$PWD/target/debug/keypool KEYPOOL_FAKE_PROVIDER_BINARY=$PWD/target/debug/keypool-fake-provider \
//     xvfb-run -a -s "-screen 0 1280x800x24" node tests/bench/chat-memory.mjs
import { AS_THE_APP_DRAWS, launchApp, startFakeProvider, tempDataDir } from '../e2e/harness.mjs';
import { answer, fillChat, messagesShown } from './chat-scroll.mjs';

const TURNS = Number(process.env.KEYPOOL_BENCH_TURNS ?? 500); // a question and its answer each

const fake = await startFakeProvider();
const app = await launchApp({ dataDir: tempDataDir('keypool-bench-'), keepPreferences: true, env: AS_THE_APP_DRAWS });
try {
  await app.driver.manage().setTimeouts({ script: 30 * 60_000 });
  await app.find('chat-page');
  const key = 'sk-bench-0000000000000000000001';
  await fake.script(key, Array.from({ length: 2 * TURNS + 1 }, (_, i) => ({ kind: 'text', chunks: [answer(i + 1)] })));
  const provider = await app.invoke('llmConfig:addProvider', { name: 'Bench', kind: 'openai', baseUrl: `${fake.url}/v1`, apiKey: key, models: ['fake-model'], defaultModel: 'fake-model' });
  if (!provider.ok) throw new Error(`adding the provider failed: ${JSON.stringify(provider.error)}`);
  const create = async (title) => {
    const chat = await app.invoke('chat:create', { providerId: provider.value.id, title });
    if (!chat.ok) throw new Error(`creating a chat failed: ${JSON.stringify(chat.error)}`);
    return chat.value;
  };
  await (await app.find('nav-settings')).click(); // the chat list loads anew when Chat opens again
  const long = await create('A thousand messages');
  await fillChat(app, long.id, TURNS, 1);
  const another = await create('Another thousand messages');
  await fillChat(app, another.id, TURNS, TURNS + 1);
  const short = await create('Two messages');
  await fillChat(app, short.id, 1, 2 * TURNS + 1);
  const idsOf = async (chat) => {
    const messages = await app.invoke('chat:getMessages', { chatId: chat.id });
    if (!messages.ok) throw new Error(`reading the messages failed: ${JSON.stringify(messages.error)}`);
    return messages.value.map((m) => m.id);
  };
  const open = async (chat, ids) => {
    await app.driver.wait(async () => (await app.driver.executeScript(`return document.querySelector('[data-chat-id="${chat.id}"] [data-testid="chat-item-select"]') !== null;`)), 15_000);
    await app.driver.executeScript(`document.querySelector('[data-chat-id="${chat.id}"] [data-testid="chat-item-select"]').click();`);
    await app.driver.wait(async () => (await app.driver.executeScript(`return document.querySelector('[data-message-id="${ids.at(-1)}"]') !== null;`)), 15_000);
  };

  await (await app.find('nav-chat')).click();
  // The first long chat read after the start, then another as long: what the second adds is
  // what more messages cost once WebKit and the JavaScript engine have warmed up.
  for (const [chat, title] of [
    [long, 'Memory per 1 000 chat messages shown'],
    [another, 'The same for a second long chat, read after it'],
  ]) {
    const ids = await idsOf(chat);
    await open(chat, ids);
    const shown = await messagesShown(app, { count: ids.length, firstId: ids[0], lastId: ids.at(-1) }, title);
    for (const line of shown.lines) console.log(line);
  }
} finally {
  await app.stop();
  fake.stop();
}
