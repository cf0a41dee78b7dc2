#!/usr/bin/env node
/**
 * The third-party software Keypool ships, for Settings → About: the crates compiled into the app
 * binary and the npm packages of the UI, each with its version, its licence (an SPDX expression)
 * and its project's address, grouped by licence, with each distinct licence's standard text once.
 *
 * `npm run licences` writes ui/src/features/about/third-party.json; `npm test` fails while that
 * file is not what this script makes from Cargo.lock and package-lock.json (tests/licences/).
 *
 * What counts as shipped:
 * - Rust: what the app package (`keypool-app`) reaches through normal dependencies on Linux x86-64
 *   (`cargo metadata --filter-platform`), not dev- or build-dependencies at any depth. Keypool's
 *   own workspace crates are left out (they are Keypool, MIT). Proc-macro crates stay in: the code
 *   they generate is in the binary.
 * - npm: package.json `dependencies` and what they need in turn (dependencies, optional and
 *   non-optional peer dependencies), resolved as Node does from package-lock.json's tree; not
 *   devDependencies.
 *
 * The standard texts come from the SPDX licence list (the spdx-license-list package); a project's
 * own copy (with its copyright line) is in its repository, which each entry links to.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const OUTPUT = join(ROOT, 'ui', 'src', 'features', 'about', 'third-party.json');
const APP_PACKAGE = 'keypool-app';
const TARGET = 'x86_64-unknown-linux-gnu';

/** `cargo metadata` for the platform the app is built for, from the lock file as it is. */
export function cargoMetadata() {
  const args = ['metadata', '--format-version', '1', '--locked', '--filter-platform', TARGET];
  return JSON.parse(execFileSync('cargo', args, { cwd: ROOT, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' }));
}

/**
 * The registry crates `appName` links: breadth-first along edges that have a normal (not dev,
 * not build) dependency kind. Path crates (the workspace's own) are walked through but not listed.
 */
export function rustPackages(metadata, appName = APP_PACKAGE) {
  const packages = new Map(metadata.packages.map((p) => [p.id, p]));
  const nodes = new Map(metadata.resolve.nodes.map((n) => [n.id, n]));
  const app = metadata.packages.find((p) => p.name === appName && p.source === null);
  if (!app) throw new Error(`cargo metadata has no package ${appName}`);
  const reached = new Set([app.id]);
  const queue = [app.id];
  while (queue.length > 0) {
    const node = nodes.get(queue.shift());
    for (const dep of node?.deps ?? []) {
      const normal = dep.dep_kinds.some((kind) => kind.kind === null);
      if (normal && !reached.has(dep.pkg)) {
        reached.add(dep.pkg);
        queue.push(dep.pkg);
      }
    }
  }
  const listed = [];
  for (const id of reached) {
    const p = packages.get(id);
    if (p.source === null) continue;
    if (!p.license) throw new Error(`crate ${p.name} ${p.version} states no SPDX licence (license_file: ${p.license_file}); read it and decide`);
    listed.push({ name: p.name, version: p.version, licence: p.license, url: projectUrl(p.repository) ?? projectUrl(p.homepage) });
  }
  return listed;
}

/**
 * Where Node finds `name` for the package at `from` in a lock file's tree: its own node_modules,
 * then each enclosing one, then the root's.
 */
function resolveInLock(lockPackages, from, name) {
  let base = from;
  for (;;) {
    const candidate = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    if (candidate in lockPackages) return candidate;
    if (!base) return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/**
 * The npm packages the root's `dependencies` reach, as lock-file paths (`node_modules/a`,
 * `node_modules/a/node_modules/b`). A dependency missing from the tree is an error unless it is
 * optional (an optional package for another platform is left out of the lock's tree).
 */
export function npmLockPaths(lock) {
  const tree = lock.packages;
  const root = tree[''];
  const reached = new Set();
  const queue = [];
  const visit = (from, names, optional) => {
    for (const name of names) {
      const path = resolveInLock(tree, from, name);
      if (path === null) {
        if (optional(name)) continue;
        throw new Error(`package-lock.json: ${from || 'the root'} needs ${name}, which is not in the tree`);
      }
      if (!reached.has(path)) {
        reached.add(path);
        queue.push(path);
      }
    }
  };
  visit('', Object.keys(root.dependencies ?? {}), () => false);
  while (queue.length > 0) {
    const path = queue.shift();
    const entry = tree[path];
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    visit(path, Object.keys(entry.dependencies ?? {}), () => false);
    visit(path, Object.keys(entry.optionalDependencies ?? {}), () => true);
    visit(path, Object.keys(entry.peerDependencies ?? {}).filter((n) => !optionalPeers[n]?.optional), () => false);
  }
  return reached;
}

/** A lock-file path's package name: what follows its last `node_modules/`. */
function nameOfLockPath(path) {
  return path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/**
 * The npm packages, with each one's project address from its package.json in `nodeModulesRoot`
 * (the lock file has none). One entry per name and version.
 */
export function npmPackages(lock, readManifest) {
  const seen = new Map();
  for (const path of npmLockPaths(lock)) {
    const entry = lock.packages[path];
    const name = entry.name ?? nameOfLockPath(path);
    const key = `${name}@${entry.version}`;
    if (seen.has(key)) continue;
    if (!entry.license) throw new Error(`npm package ${key} states no SPDX licence; read it and decide`);
    const manifest = readManifest(path);
    const repository = typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
    seen.set(key, { name, version: entry.version, licence: entry.license, url: projectUrl(repository) ?? projectUrl(manifest.homepage) });
  }
  return [...seen.values()];
}

/**
 * A browsable http(s) address for a repository or homepage field, or null: `git+https://…/x.git`
 * and `git://…` become `https://…/x`, npm's `owner/repo` and `github:owner/repo` shorthands a
 * GitHub address. Anything else (ssh, file, empty) is no link.
 */
export function projectUrl(field) {
  if (typeof field !== 'string') return null;
  let url = field.trim();
  const shorthand = /^(?:github:)?([\w.-]+\/[\w.-]+)$/.exec(url);
  if (shorthand) url = `https://github.com/${shorthand[1]}`;
  url = url.replace(/^git\+/, '').replace(/^git:\/\//, 'https://').replace(/^ssh:\/\/git@/, 'https://');
  if (!/^https?:\/\/[^/\s]+/.test(url)) return null;
  return url.replace(/\.git$/, '').replace(/\/+$/, '').replace(/#readme$/, '');
}

/**
 * An expression in SPDX syntax: old crates' `MIT/Apache-2.0` becomes `Apache-2.0 OR MIT`, and a
 * plain choice (only OR) or plain sum (only AND) lists its licences in one order, so the same
 * terms are one group.
 */
export function normaliseExpression(expression) {
  const spdx = expression.trim().replace(/\s*\/\s*/g, ' OR ').replace(/\s+/g, ' ');
  const and = /\bAND\b/.test(spdx);
  if (/[()]|\bWITH\b/.test(spdx) || (and && /\bOR\b/.test(spdx))) return spdx;
  const operator = and ? ' AND ' : ' OR ';
  return spdx
    .split(operator)
    .sort((a, b) => a.localeCompare(b, 'en'))
    .join(operator);
}

/** The licence and exception ids an expression names. */
export function licenceIds(expression) {
  return expression
    .replace(/[()]/g, ' ')
    .split(/\s+/)
    .filter((token) => token && !['AND', 'OR', 'WITH'].includes(token))
    .map((token) => token.replace(/\+$/, ''));
}

/**
 * Prose hard-wrapped at 70 to 110 columns joined back into its paragraphs, so the page wraps it to
 * its own width instead of breaking each line twice: a line of 70 or more characters continues
 * on the next when that one is neither blank nor indented. Short lines (titles, copyright
 * lines), indented blocks and blank lines stay as SPDX has them; no word changes.
 */
export function reflow(text) {
  return text.replace(/^(.{70,})\n(?=\S)/gm, '$1 ');
}

/** What the About page shows, from both lists and the SPDX licence list. */
export function thirdParty(crates, npm, spdx) {
  const groups = new Map();
  const add = (kind, pkg) => {
    const licence = normaliseExpression(pkg.licence);
    if (!groups.has(licence)) groups.set(licence, []);
    groups.get(licence).push({ kind, name: pkg.name, version: pkg.version, ...(pkg.url ? { url: pkg.url } : {}) });
  };
  for (const pkg of crates) add('crate', pkg);
  for (const pkg of npm) add('npm', pkg);
  const byName = (a, b) => a.name.localeCompare(b.name, 'en') || a.kind.localeCompare(b.kind) || a.version.localeCompare(b.version, 'en', { numeric: true });
  const sortedGroups = [...groups]
    .map(([licence, packages]) => ({ licence, packages: packages.sort(byName) }))
    .sort((a, b) => b.packages.length - a.packages.length || a.licence.localeCompare(b.licence, 'en'));
  const ids = [...new Set(sortedGroups.flatMap((g) => licenceIds(g.licence)))].sort((a, b) => a.localeCompare(b, 'en'));
  const licences = {};
  for (const id of ids) {
    const known = spdx[id];
    licences[id] = known
      ? { name: known.name, url: known.url, text: reflow(known.licenseText.replace(/\r\n/g, '\n').trim()) }
      : { name: id, url: `https://spdx.org/licenses/${id}.html` };
  }
  return { groups: sortedGroups, licences };
}

/** The file's content from the repository as it is now. */
export function generate() {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const readManifest = (path) => JSON.parse(readFileSync(join(ROOT, path, 'package.json'), 'utf8'));
  const data = thirdParty(rustPackages(cargoMetadata()), npmPackages(lock, readManifest), require('spdx-license-list/full'));
  return format(data);
}

/** JSON with one package and one licence a line, so a change of dependencies is a readable diff. */
function format({ groups, licences }) {
  const groupLines = groups.map(
    (g) => `  {"licence": ${JSON.stringify(g.licence)}, "packages": [\n${g.packages.map((p) => `    ${JSON.stringify(p)}`).join(',\n')}\n  ]}`,
  );
  const licenceLines = Object.entries(licences).map(([id, licence]) => `  ${JSON.stringify(id)}: ${JSON.stringify(licence)}`);
  return `{"groups": [\n${groupLines.join(',\n')}\n],\n"licences": {\n${licenceLines.join(',\n')}\n}}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(OUTPUT, generate());
  console.log(`keypool: wrote ${OUTPUT.slice(ROOT.length + 1)}`);
}
