import { describe, expect, it } from 'vitest';
import { filterGroups, licenceIds, packageCount, type ThirdParty } from '../thirdParty';

const data: ThirdParty = {
  groups: [
    { licence: 'Apache-2.0 OR MIT', packages: [{ kind: 'crate', name: 'serde', version: '1.0.0' }, { kind: 'npm', name: 'react', version: '19.0.0' }] },
    { licence: 'MIT', packages: [{ kind: 'npm', name: 'React-DOM', version: '19.0.0' }, { kind: 'crate', name: 'tokio', version: '1.0.0' }] },
    { licence: 'Apache-2.0 WITH LLVM-exception', packages: [{ kind: 'crate', name: 'wasi', version: '0.11.0' }] },
  ],
  licences: {
    'Apache-2.0': { name: 'Apache License 2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0', text: '…' },
    MIT: { name: 'MIT License', url: 'https://opensource.org/license/mit/', text: '…' },
    'LLVM-exception': { name: 'LLVM-exception', url: 'https://spdx.org/licenses/LLVM-exception.html' },
  },
};

describe('the third-party filter', () => {
  it('keeps everything for an empty or blank query', () => {
    expect(filterGroups(data, '  '), 'nothing typed filters nothing').toBe(data.groups);
  });

  it('keeps the packages whose name contains the query, ignoring case, in their groups', () => {
    const found = filterGroups(data, 'REACT');
    expect(found.map((g) => [g.licence, g.packages.map((p) => p.name)]), 'both react packages, each under its own licence').toEqual([
      ['Apache-2.0 OR MIT', ['react']],
      ['MIT', ['React-DOM']],
    ]);
  });

  it('keeps a whole group when its expression or a licence’s name matches', () => {
    expect(filterGroups(data, 'apache license').map((g) => g.licence), 'the full name of Apache-2.0').toEqual(['Apache-2.0 OR MIT', 'Apache-2.0 WITH LLVM-exception']);
    expect(filterGroups(data, 'llvm')[0].packages, 'an exception id matches its whole group').toHaveLength(1);
  });

  it('drops groups left empty', () => {
    expect(filterGroups(data, 'nothing-like-this'), 'no match, no groups').toEqual([]);
  });
});

describe('licence expressions', () => {
  it('names each licence and exception, not the operators', () => {
    expect(licenceIds('(Apache-2.0 OR MIT) AND Unicode-3.0'), 'the ids in order').toEqual(['Apache-2.0', 'MIT', 'Unicode-3.0']);
    expect(licenceIds('Apache-2.0 WITH LLVM-exception OR Apache-2.0 OR MIT'), 'an exception is named too, and a repeated id once').toEqual(['Apache-2.0', 'LLVM-exception', 'MIT']);
  });

  it('counts the packages of all groups', () => {
    expect(packageCount(data.groups), 'two, two and one').toBe(5);
  });
});
