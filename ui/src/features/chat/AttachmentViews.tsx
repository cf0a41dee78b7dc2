import { useRef, useState } from 'react';
import { Dialog } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import type { Attachment } from '../../ipc/bindings';
import { formatSize, useAttachmentUrl } from './attachments';

interface ListProps {
  attachments: Attachment[];
  /** In the composer: each can be removed before sending. */
  onRemove?: (attachment: Attachment) => void;
  testId?: string;
}

/**
 * A message's attachments: images as thumbnails that open a larger preview, text files as chips
 * with their name and size.
 */
export function AttachmentList({ attachments, onRemove, testId }: ListProps) {
  const { t } = useI18n();
  const [previewing, setPreviewing] = useState<Attachment | null>(null);
  if (attachments.length === 0) return null;
  return (
    <>
      <ul className="attachments" aria-label={t('attach.listLabel')} data-testid={testId}>
        {attachments.map((attachment, index) => (
          // The same file may be attached twice: the position tells them apart.
          // biome-ignore lint/suspicious/noArrayIndexKey: attachments do not move
          <li key={`${attachment.id}-${index}`} className={`attachments__item attachments__item--${attachment.kind}`} data-testid="attachment" data-kind={attachment.kind}>
            {attachment.kind === 'image' ? (
              <button type="button" className="attachment attachment--image" onClick={() => setPreviewing(attachment)} aria-label={t('attach.open', { name: attachment.name })} data-testid="attachment-open">
                <Thumbnail attachment={attachment} />
              </button>
            ) : (
              <span className="attachment attachment--text" data-testid="attachment-chip">
                <Icon name="file" size={16} />
                <span className="attachment__name">{attachment.name}</span>
                <TextSize attachment={attachment} />
              </span>
            )}
            {onRemove && (
              <button type="button" className="icon-button attachment__remove" onClick={() => onRemove(attachment)} aria-label={t('attach.remove', { name: attachment.name })} data-testid="attachment-remove">
                <Icon name="close" size={14} />
              </button>
            )}
          </li>
        ))}
      </ul>
      {previewing && <AttachmentPreview attachment={previewing} onClose={() => setPreviewing(null)} />}
    </>
  );
}

function TextSize({ attachment }: { attachment: Attachment }) {
  const { t } = useI18n();
  return <span className="attachment__size">{formatSize(attachment.size, t('intl.tag'))}</span>;
}

function Thumbnail({ attachment }: { attachment: Attachment }) {
  const url = useAttachmentUrl(attachment, true);
  // The button around it carries the name; the picture itself adds nothing to read.
  return url ? <img className="attachment__thumbnail" src={url} alt="" data-testid="attachment-thumbnail" /> : <span className="attachment__placeholder" aria-hidden="true" />;
}

/** The image at full size (the original, scaled to fit the window), its name, size and pixels. */
export function AttachmentPreview({ attachment, onClose }: { attachment: Attachment; onClose: () => void }) {
  const { t } = useI18n();
  const url = useAttachmentUrl(attachment, false);
  const close = useRef<HTMLButtonElement>(null);
  const details =
    attachment.width !== null && attachment.height !== null
      ? t('attach.details', { size: formatSize(attachment.size, t('intl.tag')), width: attachment.width, height: attachment.height })
      : formatSize(attachment.size, t('intl.tag'));
  return (
    <Dialog title={attachment.name} onClose={onClose} initialFocus={close} testId="attachment-preview">
      <div className="attachment-preview">
        {url ? <img className="attachment-preview__image" src={url} alt={attachment.name} data-testid="attachment-preview-image" /> : <p>{t('attach.loading')}</p>}
        <p className="attachment-preview__details">{details}</p>
      </div>
      <div className="dialog__actions">
        <button ref={close} type="button" className="button" onClick={onClose} data-testid="attachment-preview-close">
          {t('attach.close')}
        </button>
      </div>
    </Dialog>
  );
}
