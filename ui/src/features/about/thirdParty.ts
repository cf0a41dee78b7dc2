/**
 * The third-party software Keypool ships, as tests/licences/third-party.mjs writes it into
 * third-party.json (`npm run licences`; `npm test` fails while that file is out of date).
 */

export interface ThirdPartyPackage {
  kind: 'crate' | 'npm';
  name: string;
  version: string;
  /** The project's repository or homepage; absent when the package names neither. */
  url?: string;
}

/** The packages under one SPDX licence expression (`Apache-2.0 OR MIT`). */
export interface LicenceGroup {
  licence: string;
  packages: ThirdPartyPackage[];
}

/** One licence or exception an expression names; `text` is its standard text where SPDX has one. */
export interface Licence {
  name: string;
  url: string;
  text?: string;
}

export interface ThirdParty {
  groups: LicenceGroup[];
  licences: Record<string, Licence>;
}

/**
 * The list, loaded on first use: it is a chunk of its own (about 100 kB, mostly licence texts),
 * so it weighs nothing on the app's start or on Settings until About asks for it.
 */
export function loadThirdParty(): Promise<ThirdParty> {
  return import('./third-party.json').then((module) => module.default as ThirdParty);
}

/** The licence and exception ids an SPDX expression names, each once, in the order first named. */
export function licenceIds(expression: string): string[] {
  const tokens = expression
    .replace(/[()]/g, ' ')
    .split(/\s+/)
    .filter((token) => token !== '' && token !== 'AND' && token !== 'OR' && token !== 'WITH');
  return [...new Set(tokens)];
}

/**
 * The groups a filter leaves, in their order: a group whose licence expression (or a licence's
 * name, `Apache License 2.0`) contains the query keeps all its packages; otherwise a group keeps
 * the packages whose name contains it, and a group left with none is dropped. Case is ignored;
 * an empty query keeps everything.
 */
export function filterGroups(data: ThirdParty, query: string): LicenceGroup[] {
  const needle = query.trim().toLocaleLowerCase();
  if (needle === '') return data.groups;
  const result: LicenceGroup[] = [];
  for (const group of data.groups) {
    const names = [group.licence, ...licenceIds(group.licence).map((id) => data.licences[id]?.name ?? id)];
    if (names.some((name) => name.toLocaleLowerCase().includes(needle))) {
      result.push(group);
      continue;
    }
    const packages = group.packages.filter((p) => p.name.toLocaleLowerCase().includes(needle));
    if (packages.length > 0) result.push({ licence: group.licence, packages });
  }
  return result;
}

/** How many packages the groups hold. */
export function packageCount(groups: readonly LicenceGroup[]): number {
  return groups.reduce((sum, group) => sum + group.packages.length, 0);
}
