import { useEffect, useId, useMemo, useState } from 'react';
import { BrowserLink } from '../../components/BrowserLink';
import { useI18n } from '../../i18n/I18nProvider';
import { filterGroups, licenceIds, loadThirdParty, packageCount, type Licence, type LicenceGroup, type ThirdParty } from './thirdParty';

type State = { kind: 'loading' } | { kind: 'failed' } | { kind: 'ready'; data: ThirdParty };

interface Props {
  /** Where the list comes from: its own chunk, loaded when About first shows (tests pass their own). */
  load?: () => Promise<ThirdParty>;
}

/**
 * The third-party software Keypool ships, one disclosure per licence expression with the
 * packages under it, each licence's standard text to read in place, and a filter over names and
 * licences. While a filter is typed every group that matches is open; the count of matches is a
 * status, so a screen reader hears it.
 */
export function ThirdPartySoftware({ load = loadThirdParty }: Props) {
  const { t } = useI18n();
  const filterId = useId();
  const [state, setState] = useState<State>({ kind: 'loading' });
  const [query, setQuery] = useState('');

  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ kind: 'ready', data }),
      () => live && setState({ kind: 'failed' }),
    );
    return () => {
      live = false;
    };
  }, [load]);

  const groups = useMemo(() => (state.kind === 'ready' ? filterGroups(state.data, query) : []), [state, query]);
  const filtering = query.trim() !== '';
  const count = packageCount(groups);

  return (
    <section className="third-party" aria-labelledby="third-party-title" data-testid="third-party">
      <h3 id="third-party-title">{t('about.thirdParty')}</h3>
      <p className="muted">{t('about.thirdPartyIntro')}</p>
      {state.kind === 'loading' && (
        <p className="muted" aria-busy="true" data-testid="third-party-loading">
          {t('about.thirdPartyLoading')}
        </p>
      )}
      {state.kind === 'failed' && (
        <p className="field__error" role="alert" data-testid="third-party-failed">
          {t('about.thirdPartyFailed')}
        </p>
      )}
      {state.kind === 'ready' && (
        <>
          <div className="field third-party__filter">
            <label className="field__label" htmlFor={filterId}>
              {t('about.thirdPartyFilter')}
            </label>
            <input
              id={filterId}
              type="search"
              className="input"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Escape' && query) {
                  e.preventDefault();
                  setQuery('');
                }
              }}
              data-testid="third-party-filter"
            />
          </div>
          <p className="muted third-party__count" role="status" data-testid="third-party-count">
            {filtering
              ? count === 0
                ? t('about.thirdPartyNone', { query: query.trim() })
                : t('about.thirdPartyMatches', { count })
              : t('about.thirdPartyPackages', { count })}
          </p>
          <ul className="third-party__groups">
            {groups.map((group) => (
              <li key={group.licence}>
                <GroupDetails group={group} licences={state.data.licences} open={filtering} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/**
 * One licence expression's disclosure. Its packages are put on the page once it opens (by the
 * user, or by a filter that matched): the whole list is several hundred rows, mostly unread.
 */
function GroupDetails({ group, licences, open }: { group: LicenceGroup; licences: Record<string, Licence>; open: boolean }) {
  const { t } = useI18n();
  const [expanded, setExpanded] = useState(open);
  return (
    <details className="third-party__group" open={open} onToggle={(e) => setExpanded(e.currentTarget.open)} data-testid="licence-group">
      <summary>
        <span className="third-party__licence">{group.licence}</span>{' '}
        <span className="muted">{t('about.thirdPartyPackages', { count: group.packages.length })}</span>
      </summary>
      {(expanded || open) && (
        <div className="third-party__group-body">
          {licenceIds(group.licence).map((id) => (
            <LicenceText key={id} id={id} licence={licences[id]} />
          ))}
          <ul className="third-party__packages">
            {group.packages.map((p) => (
              <li key={`${p.kind}:${p.name}@${p.version}`} data-testid="third-party-package">
                {p.url ? (
                  <BrowserLink url={p.url} className="md-link">
                    {p.name}
                  </BrowserLink>
                ) : (
                  <span>{p.name}</span>
                )}{' '}
                <span className="third-party__version">{p.version}</span>{' '}
                <span className="muted">{t(p.kind === 'crate' ? 'about.crate' : 'about.npm')}</span>
              </li>
            ))}
          </ul>
        </div>
      )}
    </details>
  );
}

/**
 * A licence's standard text in a disclosure of its own, put on the page only once opened (the
 * longest are several pages, and a group may name two or three); a licence without a text in the
 * SPDX list (an exception) links to its SPDX page.
 */
function LicenceText({ id, licence }: { id: string; licence: Licence | undefined }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const name = licence?.name ?? id;
  if (!licence?.text) {
    return (
      <p className="third-party__licence-link">
        <BrowserLink url={licence?.url ?? `https://spdx.org/licenses/${id}.html`} className="md-link">
          {t('about.licencePage', { name })}
        </BrowserLink>
      </p>
    );
  }
  return (
    <details className="third-party__text" onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="licence-text">
      <summary>{t('about.licenceFullText', { name })}</summary>
      {open && <pre>{licence.text}</pre>}
    </details>
  );
}
