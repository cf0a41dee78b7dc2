/**
 * The third-party list in Settings → About is current and lists what ships: the committed file is
 * what `npm run licences` makes now, and the walks that make it keep dev- and build-only
 * dependencies out.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { generate, normaliseExpression, npmLockPaths, OUTPUT, projectUrl, reflow, ROOT, rustPackages, thirdParty } from './third-party.mjs';

describe('the committed third-party list', () => {
  it('is what the generator makes from Cargo.lock and package-lock.json now', () => {
    const committed = readFileSync(OUTPUT, 'utf8');
    assert.ok(
      committed === generate(),
      'ui/src/features/about/third-party.json is out of date with the dependencies: run `npm run licences` and commit the file',
    );
  });

  it('reaches exactly the npm packages that npm itself marks as not dev-only', () => {
    const lock = JSON.parse(readFileSync(`${ROOT}/package-lock.json`, 'utf8'));
    const reached = npmLockPaths(lock);
    const production = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && !entry.dev && !entry.link)
      .map(([path]) => path);
    assert.deepEqual([...reached].sort(), production.sort(), 'the walk from `dependencies` and npm’s dev flags must agree on what ships');
  });

  it('names the app’s direct dependencies and none of the dev tools', () => {
    const data = JSON.parse(readFileSync(OUTPUT, 'utf8'));
    const names = new Set(data.groups.flatMap((g) => g.packages.map((p) => `${p.kind}:${p.name}`)));
    for (const shipped of ['crate:tauri', 'crate:tokio', 'crate:rusqlite', 'npm:react', 'npm:chart.js']) {
      assert.ok(names.has(shipped), `${shipped} is in the app, so About must list it`);
    }
    for (const tool of ['npm:vitest', 'npm:@biomejs/biome', 'npm:spdx-license-list', 'crate:tauri-build', 'crate:keypool-api']) {
      assert.ok(!names.has(tool), `${tool} is a dev/build tool or Keypool itself, not shipped third-party software`);
    }
    for (const group of data.groups) {
      for (const id of group.licence.replace(/[()]/g, ' ').split(/\s+/).filter((t) => t && !['AND', 'OR', 'WITH'].includes(t))) {
        assert.ok(data.licences[id], `${id} (in ${group.licence}) must have an entry in licences for the page to link`);
      }
    }
  });
});

describe('the Rust walk', () => {
  const pkg = (name, source = 'registry+https://example.invalid') => ({ id: name, name, version: '1.0.0', source, license: 'MIT', repository: `https://example.invalid/${name}` });
  const edge = (to, ...kinds) => ({ pkg: to, dep_kinds: kinds.map((kind) => ({ kind, target: null })) });
  const metadata = {
    packages: [pkg('keypool-app', null), pkg('keypool-api', null), pkg('normal'), pkg('deep'), pkg('dev-only'), pkg('build-only'), pkg('build-of-normal'), pkg('both')],
    resolve: {
      nodes: [
        { id: 'keypool-app', deps: [edge('keypool-api', null), edge('dev-only', 'dev'), edge('build-only', 'build'), edge('both', 'dev', null)] },
        { id: 'keypool-api', deps: [edge('normal', null)] },
        { id: 'normal', deps: [edge('deep', null), edge('build-of-normal', 'build')] },
        { id: 'deep', deps: [] },
        { id: 'dev-only', deps: [] },
        { id: 'build-only', deps: [] },
        { id: 'build-of-normal', deps: [] },
        { id: 'both', deps: [] },
      ],
    },
  };

  it('follows normal dependencies at every depth and leaves out dev, build and workspace crates', () => {
    const names = rustPackages(metadata).map((p) => p.name).sort();
    assert.deepEqual(names, ['both', 'deep', 'normal'], 'only crates linked through normal edges ship, and workspace crates are Keypool itself');
  });

  it('refuses a crate that states no licence expression', () => {
    const unlicensed = structuredClone(metadata);
    unlicensed.packages.find((p) => p.name === 'deep').license = null;
    assert.throws(() => rustPackages(unlicensed), /deep 1\.0\.0 states no SPDX licence/, 'a crate without an expression needs a person to read its licence');
  });
});

describe('the npm walk', () => {
  const lock = {
    packages: {
      '': { dependencies: { a: '1' }, devDependencies: { tool: '1' } },
      'node_modules/a': { version: '1.0.0', dependencies: { b: '1' }, optionalDependencies: { absent: '1' }, peerDependencies: { peer: '1', maybe: '1' }, peerDependenciesMeta: { maybe: { optional: true } } },
      'node_modules/a/node_modules/b': { version: '2.0.0', dependencies: { c: '1' } },
      'node_modules/b': { version: '1.0.0', dev: true },
      'node_modules/c': { version: '1.0.0' },
      'node_modules/peer': { version: '1.0.0' },
      'node_modules/maybe': { version: '1.0.0', dev: true },
      'node_modules/tool': { version: '1.0.0', dev: true, dependencies: { c: '1' } },
    },
  };

  it('resolves nested copies first, then enclosing node_modules, as Node does', () => {
    assert.deepEqual(
      [...npmLockPaths(lock)].sort(),
      ['node_modules/a', 'node_modules/a/node_modules/b', 'node_modules/c', 'node_modules/peer'],
      'a’s own b, the hoisted c and a required peer ship; dev tools, optional peers and absent optionals do not',
    );
  });

  it('fails on a required dependency missing from the tree', () => {
    const broken = structuredClone(lock);
    delete broken.packages['node_modules/c'];
    assert.throws(() => npmLockPaths(broken), /needs c/, 'a lock file that does not hold what ships cannot make the list');
  });
});

describe('licence expressions and links', () => {
  it('writes old slash expressions in SPDX syntax and orders plain choices', () => {
    assert.equal(normaliseExpression('MIT/Apache-2.0'), 'Apache-2.0 OR MIT', 'a slash is the old spelling of OR');
    assert.equal(normaliseExpression('MIT OR Apache-2.0'), normaliseExpression('Apache-2.0 OR MIT'), 'the same choice is one group');
    assert.equal(normaliseExpression('MIT AND BSD-3-Clause'), 'BSD-3-Clause AND MIT', 'a plain AND is ordered too');
    assert.equal(normaliseExpression('(MIT OR Apache-2.0) AND Unicode-3.0'), '(MIT OR Apache-2.0) AND Unicode-3.0', 'a compound expression stays as written');
  });

  it('turns repository fields into browsable https addresses, and others into no link', () => {
    assert.equal(projectUrl('git+https://github.com/remarkjs/remark-gfm.git'), 'https://github.com/remarkjs/remark-gfm', 'npm’s git+https form');
    assert.equal(projectUrl('git://github.com/x/y.git'), 'https://github.com/x/y', 'the git protocol is browsed over https');
    assert.equal(projectUrl('wooorm/lowlight'), 'https://github.com/wooorm/lowlight', 'npm’s owner/repo shorthand');
    assert.equal(projectUrl('git@github.com:x/y.git'), null, 'an scp-style address is not a link');
    assert.equal(projectUrl(undefined), null, 'no field, no link');
  });

  it('joins hard-wrapped prose into paragraphs and keeps titles, blank lines and indented blocks', () => {
    const long = 'Permission is hereby granted, free of charge, to any person obtaining a copy';
    assert.equal(reflow(`MIT License\n\n${long}\nof this software.`), `MIT License\n\n${long} of this software.`, 'a long line runs on into the next');
    assert.equal(reflow('Apache License\nVersion 2.0'), 'Apache License\nVersion 2.0', 'a short line is a line of its own');
    assert.equal(reflow(`${long}\n    (a) an indented item`), `${long}\n    (a) an indented item`, 'an indented line starts its own line');
    assert.equal(reflow(`${long}\n\nNext.`), `${long}\n\nNext.`, 'a blank line ends the paragraph');
  });

  it('gives every distinct licence its text once, and an exception its SPDX page', () => {
    const spdx = { MIT: { name: 'MIT License', url: 'https://opensource.org/license/mit/', licenseText: 'MIT text\r\n' } };
    const data = thirdParty(
      [{ name: 'x', version: '1', licence: 'MIT', url: null }, { name: 'y', version: '1', licence: 'MIT WITH LLVM-exception', url: null }],
      [{ name: 'z', version: '1', licence: 'MIT', url: 'https://example.invalid/z' }],
      spdx,
    );
    assert.deepEqual(Object.keys(data.licences), ['LLVM-exception', 'MIT'], 'each id appears once');
    assert.equal(data.licences.MIT.text, 'MIT text', 'the text is kept with Unix line ends');
    assert.equal(data.licences['LLVM-exception'].url, 'https://spdx.org/licenses/LLVM-exception.html', 'an id without a text links to its SPDX page');
    assert.deepEqual(data.groups.map((g) => [g.licence, g.packages.length]), [['MIT', 2], ['MIT WITH LLVM-exception', 1]], 'groups are largest first');
    assert.ok(!('url' in data.groups[0].packages[0]), 'a package without a project address carries no url');
  });
});
