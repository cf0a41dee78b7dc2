import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nProvider } from '../../../i18n/I18nProvider';
import { LIMITS } from '../../../ipc/bindings';
import { createFakeBackend, type FakeBackend } from '../../../test/fakeBackend';
import { forgetAttachmentUrls, toBase64 } from '../attachments';

let backend: FakeBackend;
vi.mock('@tauri-apps/api/core', () => ({
  invoke: (command: string, args: Record<string, unknown>) => backend.invoke(command, args),
  Channel: class {
    onmessage: (message: unknown) => void = () => {};
  },
}));
vi.mock('@tauri-apps/api/event', () => ({ listen: (event: string, handler: never) => backend.listen(event, handler) }));

const { ChatPage } = await import('../ChatPage');

function renderPage(locale: 'en' | 'ru' = 'en') {
  const user = userEvent.setup({ applyAccept: false });
  render(
    <I18nProvider initial={locale}>
      <ChatPage />
    </I18nProvider>,
  );
  return user;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const png = (name = 'shot.png') => new File([new Uint8Array(PNG_SIGNATURE)], name, { type: 'image/png' });
const text = (name = 'notes.md', body = '# Plan') => new File([body], name, { type: 'text/markdown' });
const sends = () => backend.callsOf('chat:send').map((args) => args.request);
const fileInput = () => screen.getByTestId('composer-file-input') as HTMLInputElement;
/** The id the backend gave the `n`th file attached. */
const idOf = (n: number) => backend.attachments()[n].id;

async function openChat() {
  backend.addChat({ title: 'Pictures' });
  const user = renderPage();
  await screen.findByRole('textbox', { name: 'Message' });
  return user;
}

describe('attachments in the composer', () => {
  beforeEach(() => {
    backend = createFakeBackend();
    forgetAttachmentUrls();
    localStorage.clear();
  });

  it('base64 of large files is written in chunks, byte for byte', () => {
    const bytes = new Uint8Array(100_000).map((_, i) => i % 251);
    expect(atob(toBase64(bytes)).length, 'every byte survives the chunking').toBe(bytes.length);
    expect(toBase64(new Uint8Array([0x89, 0x50]))).toBe('iVA=');
  });

  it('attaches a picked image, shows its thumbnail, and sends it by id with the text', async () => {
    const user = await openChat();
    await user.upload(fileInput(), png());
    const list = await screen.findByTestId('composer-attachments');
    const open = within(list).getByRole('button', { name: 'View shot.png larger' });
    await waitFor(() => expect(within(open).getByTestId('attachment-thumbnail')).toHaveAttribute('src', `data:image/png;base64,thumb-${idOf(0)}`));
    expect(backend.callsOf('chat:attach')[0].data, 'the bytes went to the backend in base64').toBe(toBase64(new Uint8Array(PNG_SIGNATURE)));

    await user.type(screen.getByRole('textbox', { name: 'Message' }), 'What is it?{Enter}');
    await waitFor(() => expect(sends()).toHaveLength(1));
    expect(sends()[0]).toEqual({ chatId: 'chat-1', content: 'What is it?', attachments: [{ id: idOf(0), name: 'shot.png' }] });
    expect(screen.queryByTestId('composer-attachments'), 'the composer is empty again').toBeNull();
    const sent = await screen.findByTestId('message-attachments');
    expect(within(sent).getByRole('button', { name: 'View shot.png larger' }), 'the transcript shows it').toBeVisible();
  });

  it('an image alone is a message: it is sent without text', async () => {
    const user = await openChat();
    await user.upload(fileInput(), png());
    await screen.findByTestId('composer-attachments');
    const send = screen.getByRole('button', { name: 'Send' });
    await waitFor(() => expect(send).toBeEnabled());
    await user.click(send);
    await waitFor(() => expect(sends()).toEqual([{ chatId: 'chat-1', attachments: [{ id: idOf(0), name: 'shot.png' }] }]));
  });

  it('takes a pasted image and a dropped text file; a removed one is not sent', async () => {
    const user = await openChat();
    const input = screen.getByRole('textbox', { name: 'Message' });
    fireEvent.paste(input, { clipboardData: { files: [png('image.png')], types: ['Files'] } });
    const list = await screen.findByTestId('composer-attachments');
    await within(list).findByRole('button', { name: 'View image.png larger' });
    fireEvent.drop(screen.getByTestId('composer'), { dataTransfer: { files: [text()], types: ['Files'] } });
    await within(list).findByText('notes.md');
    await user.click(within(list).getByRole('button', { name: 'Remove image.png' }));
    expect(within(list).queryByRole('button', { name: 'View image.png larger' }), 'removed').toBeNull();
    await user.type(input, 'Read this{Enter}');
    await waitFor(() => expect(sends()[0]?.attachments).toEqual([{ id: idOf(1), name: 'notes.md' }]));
  });

  it('words a refused file from its issue code, and sends nothing of it', async () => {
    backend.onAttach(() => ({
      error: { code: 'validation', message: 'data: is larger', issues: [{ path: 'data', code: 'file_too_large', params: { max: 1048576 }, message: 'x' }] },
    }));
    const user = await openChat();
    await user.upload(fileInput(), text('huge.log'));
    const problems = await screen.findByRole('alert');
    expect(problems).toHaveTextContent('huge.log: The file is larger than 1 MB.');
    expect(screen.queryByTestId('composer-attachments'), 'nothing attached').toBeNull();
    expect(screen.getByRole('button', { name: 'Send' }), 'nothing to send').toBeDisabled();
  });

  it('words an image of too many pixels from its code, in megapixels', async () => {
    backend.onAttach(() => ({
      error: {
        code: 'validation',
        message: 'data: is an image of 132250000 pixels',
        issues: [{ path: 'data', code: 'image_too_large', params: { count: 132_250_000, max: 36_000_000 }, message: 'x' }],
      },
    }));
    const user = await openChat();
    await user.upload(fileInput(), png('huge.png'));
    const problems = await screen.findByRole('alert');
    expect(problems).toHaveTextContent('huge.png: The image has 132.3 megapixels; at most 36 can be attached. Scale it down first.');
    expect(screen.queryByTestId('composer-attachments'), 'nothing attached').toBeNull();
  });

  it('refuses more files than a message takes, and states the limits', async () => {
    const user = await openChat();
    const files = Array.from({ length: LIMITS.attachments.maxItems + 1 }, (_, i) => text(`f${i}.txt`));
    await user.upload(fileInput(), files);
    expect(await screen.findByRole('alert')).toHaveTextContent(`A message takes at most ${LIMITS.attachments.maxItems} attachments.`);
    await waitFor(() => expect(screen.getAllByTestId('attachment')).toHaveLength(LIMITS.attachments.maxItems));
    expect(screen.getByTestId('composer-hint')).toHaveTextContent('images (PNG, JPEG, WebP, GIF) up to 20 MB, text files up to 1 MB');
  });

  it('opens a larger preview that is labelled, shows the original and closes with Escape', async () => {
    const user = await openChat();
    await user.upload(fileInput(), png());
    const open = await screen.findByRole('button', { name: 'View shot.png larger' });
    await user.click(open);
    const dialog = screen.getByRole('dialog', { name: 'shot.png' });
    await waitFor(() => expect(within(dialog).getByRole('img', { name: 'shot.png' })).toHaveAttribute('src', `data:image/png;base64,full-${idOf(0)}`));
    expect(dialog).toHaveTextContent('64 × 48 px');
    expect(within(dialog).getByRole('button', { name: 'Close' }), 'focus starts on Close').toHaveFocus();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog'), 'Escape closes it').toBeNull();
    await waitFor(() => expect(open, 'focus returns to the thumbnail').toHaveFocus());
  });

  it('a reply refused because the model takes no images says so', async () => {
    backend.onSend(() => ({ status: 'error', content: '', errorCode: 'provider', error: 'x', errorDetails: { kind: 'imagesRefused', status: 400, message: 'Invalid content type.' } }));
    const user = await openChat();
    await user.upload(fileInput(), png());
    await screen.findByTestId('composer-attachments');
    await user.type(screen.getByRole('textbox', { name: 'Message' }), 'Hi{Enter}');
    expect(await screen.findByText(/it probably does not take images/)).toHaveTextContent('The key was not affected.');
  });
});
