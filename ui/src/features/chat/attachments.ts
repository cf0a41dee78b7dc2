import { useEffect, useState } from 'react';
import type { Attachment } from '../../ipc/bindings';
import { chatApi } from '../../ipc/chat';

/**
 * Attachments as the page handles them: bytes read from a File into base64 for `chat:attach`,
 * and the images' data URLs, fetched once per attachment and variant and kept for the session
 * (a long chat scrolled back and forth asks the backend once).
 */

/** `bytes` in base64, in chunks (a 20 MB image would overflow one `String.fromCharCode` call). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

/** What a File holds, in base64. */
export async function fileToBase64(file: Blob): Promise<string> {
  return toBase64(new Uint8Array(await file.arrayBuffer()));
}

const urls = new Map<string, Promise<string>>();

/** The `data:` URL of an attachment's original or thumbnail; a failed fetch is asked again next time. */
export function attachmentUrl(id: string, thumbnail: boolean): Promise<string> {
  const key = `${id}:${thumbnail ? 'thumb' : 'full'}`;
  let url = urls.get(key);
  if (!url) {
    url = chatApi.attachmentData(id, thumbnail).then(({ mediaType, data }) => `data:${mediaType};base64,${data}`);
    url.catch(() => urls.delete(key));
    urls.set(key, url);
  }
  return url;
}

/** Forgets the fetched images (tests start each from nothing). */
export function forgetAttachmentUrls() {
  urls.clear();
}

/** An attachment's image as a data URL once fetched; null before, or when it could not be read. */
export function useAttachmentUrl(attachment: Attachment, thumbnail: boolean): string | null {
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (attachment.kind !== 'image') return;
    let live = true;
    attachmentUrl(attachment.id, thumbnail).then(
      (found) => live && setUrl(found),
      () => live && setUrl(null),
    );
    return () => {
      live = false;
    };
  }, [attachment.id, attachment.kind, thumbnail]);
  return url;
}

/** A size in bytes as people read it: `512 B`, `34 KB`, `2.4 MB`. */
export function formatSize(bytes: number, intlTag: string): string {
  const format = (n: number, digits: number) => new Intl.NumberFormat(intlTag, { maximumFractionDigits: digits }).format(n);
  if (bytes < 1024) return `${format(bytes, 0)} B`;
  if (bytes < 1024 * 1024) return `${format(bytes / 1024, 0)} KB`;
  return `${format(bytes / (1024 * 1024), 1)} MB`;
}
