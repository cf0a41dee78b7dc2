// The agents' compatibility table (README.md here) names the very versions install.sh pins: a
// version bump without a new row fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

const here = import.meta.dirname;
const pinned = [...readFileSync(join(here, 'install.sh'), 'utf8').matchAll(/install_agent (\S+) (\d[\w.-]*)/g)].map(
  ([, pkg, version]) => ({ pkg, version }),
);

describe('the agents compatibility table', () => {
  it('names each pinned agent with the version the tests run', () => {
    assert.equal(pinned.length, 3, `three agents pinned: ${JSON.stringify(pinned)}`);
    const table = readFileSync(join(here, 'README.md'), 'utf8');
    for (const { pkg, version } of pinned) {
      const row = table.split('\n').find((line) => line.startsWith('|') && line.includes(`\`${pkg}\``));
      assert.ok(row, `a row for ${pkg}`);
      assert.equal(row.split('|')[2].trim(), version, `${pkg}: the table says the version install.sh pins`);
    }
  });
});
