import { useId, useRef, useState } from 'react';
import { ConfirmDeleteDialog } from '../../components/ConfirmDeleteDialog';
import { Icon } from '../../components/Icon';
import { useI18n } from '../../i18n/I18nProvider';
import { errorText } from '../../i18n/problems';
import type { Price, SetPriceArgs } from '../../ipc/bindings';
import { usageApi } from '../../ipc/usage';
import { PriceDialog } from './PriceDialog';
import { formatPrice } from './usageFormat';
import type { PricesLoad } from './useUsage';
import { TableRegion } from './TableRegion';

interface Props {
  state: PricesLoad;
  /** Model names to suggest when adding a price. */
  models: readonly string[];
  /** The models that spent tokens in the period shown and have no price. */
  unpriced: readonly string[];
  /** After a price was stored or deleted: read the prices and the costs again. */
  onChanged: () => Promise<unknown>;
  onRetry: () => void;
}

type Editing = { kind: 'add'; model?: string } | { kind: 'edit'; price: Price };

/** The price of each model, per million tokens, from which the page's costs are computed. */
export function PricesSection({ state, models, unpriced, onChanged, onRetry }: Props) {
  const { t, intlTag } = useI18n();
  const titleId = useId();
  const [editing, setEditing] = useState<Editing | null>(null);
  const [deleting, setDeleting] = useState<Price | null>(null);
  const addButton = useRef<HTMLButtonElement>(null);
  const dollars = (usd: number) => formatPrice(usd, intlTag);

  async function save(price: SetPriceArgs) {
    await usageApi.setPrice(price);
    await onChanged();
  }

  let body: React.ReactNode;
  if (state.kind === 'loading') {
    body = (
      <p className="muted" aria-busy="true">
        {t('usagePage.pricesLoading')}
      </p>
    );
  } else if (state.kind === 'failed') {
    body = (
      <div className="form-error" role="alert" data-testid="prices-load-error">
        <p>{t('usagePage.pricesLoadFailed', { message: errorText(t, state.error) })}</p>
        <button type="button" className="button" onClick={onRetry}>
          {t('providers.retry')}
        </button>
      </div>
    );
  } else if (state.prices.length === 0) {
    body = (
      <p className="muted" data-testid="prices-empty">
        {t('usagePage.pricesEmpty')}
      </p>
    );
  } else {
    body = (
      <TableRegion labelledBy={titleId}>
        <table className="usage-table" data-testid="price-table">
          <caption className="visually-hidden">{t('usagePage.pricesCaption')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('usagePage.model')}</th>
              <th scope="col" className="num">
                {t('usagePage.priceInput')}
              </th>
              <th scope="col" className="num">
                {t('usagePage.priceCached')}
              </th>
              <th scope="col" className="num">
                {t('usagePage.priceOutput')}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t('usagePage.actions')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {state.prices.map((price) => (
              <tr key={price.model} data-testid="price-row" data-model={price.model}>
                <th scope="row">
                  <code>{price.model}</code>
                </th>
                <td className="num">{dollars(price.inputPerMillion)}</td>
                <td className="num">
                  {price.cachedInputPerMillion === null ? <span className="muted">{t('usagePage.sameAsInput')}</span> : dollars(price.cachedInputPerMillion)}
                </td>
                <td className="num">{dollars(price.outputPerMillion)}</td>
                <td className="usage-table__actions">
                  <button
                    type="button"
                    className="icon-button icon-button--small"
                    aria-label={t('usagePage.editPrice', { model: price.model })}
                    title={t('usagePage.editPrice', { model: price.model })}
                    onClick={() => setEditing({ kind: 'edit', price })}
                    data-testid="price-edit"
                  >
                    <Icon name="pencil" size={16} />
                  </button>
                  <button
                    type="button"
                    className="icon-button icon-button--small icon-button--danger"
                    aria-label={t('usagePage.deletePrice', { model: price.model })}
                    title={t('usagePage.deletePrice', { model: price.model })}
                    onClick={() => setDeleting(price)}
                    data-testid="price-delete"
                  >
                    <Icon name="trash" size={16} />
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableRegion>
    );
  }

  return (
    <section className="usage-section" aria-labelledby={titleId} data-testid="prices-section">
      <header className="section-header section-header--row">
        <div>
          <h2 id={titleId}>{t('usagePage.pricesTitle')}</h2>
          <p className="muted">{t('usagePage.pricesIntro')}</p>
        </div>
        <button ref={addButton} type="button" className="button" onClick={() => setEditing({ kind: 'add' })} data-testid="price-add">
          <Icon name="plus" size={16} />
          {t('usagePage.addPrice')}
        </button>
      </header>
      {unpriced.length > 0 && state.kind === 'loaded' && (
        <div className="usage-unpriced" data-testid="unpriced-models">
          <p>{t('usagePage.unpricedIntro')}</p>
          <ul className="usage-unpriced__list">
            {unpriced.map((model) => (
              <li key={model} data-testid="unpriced-model" data-model={model}>
                <code>{model}</code>
                <button
                  type="button"
                  className="button button--small"
                  aria-label={t('usagePage.addPriceFor', { model })}
                  onClick={() => setEditing({ kind: 'add', model })}
                >
                  {t('usagePage.addPrice')}
                </button>
              </li>
            ))}
          </ul>
        </div>
      )}
      {body}
      {editing && (
        <PriceDialog
          price={editing.kind === 'edit' ? editing.price : undefined}
          model={editing.kind === 'add' ? editing.model : undefined}
          models={models}
          onSave={save}
          onClose={() => setEditing(null)}
        />
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t('usagePage.deletePriceTitle', { model: deleting.model })}
          body={t('usagePage.deletePriceBody')}
          confirmLabel={t('usagePage.deletePriceConfirm')}
          failure={(message) => t('usagePage.deletePriceFailed', { message })}
          testId="delete-price"
          onConfirm={async () => {
            await usageApi.deletePrice(deleting.model);
            await onChanged();
          }}
          onClose={() => setDeleting(null)}
          returnFocus={() => addButton.current}
        />
      )}
    </section>
  );
}
