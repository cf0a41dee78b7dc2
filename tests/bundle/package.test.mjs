// The packages hold what an installed Keypool needs: the binary (every library it links found;
// stripped in a release build), its desktop entry and its icons, under the app's name, version
// and description. run.sh builds them (KEYPOOL_BUNDLE_PROFILE: release, or debug in npm test) and
// extracts the .deb into KEYPOOL_DEB_ROOT.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { launchApp } from '../e2e/harness.mjs';

const REPO = join(import.meta.dirname, '..', '..');
const config = JSON.parse(readFileSync(join(REPO, 'src-tauri', 'tauri.conf.json'), 'utf8'));
const {
  KEYPOOL_BUNDLE_DIR: BUNDLES,
  KEYPOOL_BUNDLE_PROFILE: PROFILE,
  KEYPOOL_DEB: DEB,
  KEYPOOL_DEB_ROOT: ROOT,
  KEYPOOL_APP_BINARY: BINARY,
} = process.env;
const ICON_SIZES = [32, 128, 256, 512];

const run = (command, ...args) => execFileSync(command, args, { encoding: 'utf8' });

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(file) {
  const bytes = readFileSync(file);
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG', `${file} is a PNG`);
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

/** The `Key=value` lines of a desktop entry's [Desktop Entry] group. */
function desktopEntry(file) {
  const lines = readFileSync(file, 'utf8').split('\n').filter((line) => line && !line.startsWith('#') && !line.startsWith('['));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

describe('the .deb', () => {
  it('is the one run.sh extracted, for this version', () => {
    assert.ok(DEB && ROOT && BINARY?.startsWith(ROOT), 'run by tests/bundle/run.sh, which extracts the .deb');
    assert.ok(DEB.endsWith(`_${config.version}_${run('dpkg', '--print-architecture').trim()}.deb`), `${DEB} is this version's`);
  });

  it('names the app, its version, description and the libraries it needs', () => {
    const field = (name) => run('dpkg-deb', '--field', DEB, name).trim();
    assert.equal(field('Package'), 'keypool');
    assert.equal(field('Version'), config.version, 'the version of tauri.conf.json');
    const description = field('Description');
    assert.ok(description.startsWith(config.bundle.shortDescription), `the summary line: ${description}`);
    assert.match(description, /API key pool/, 'and the long description');
    for (const library of ['libwebkit2gtk-4.1-0', 'libgtk-3-0']) {
      assert.match(field('Depends'), new RegExp(library), `it depends on ${library}`);
    }
  });

  it('holds a binary whose libraries are all found, stripped in a release build', () => {
    assert.ok(['release', 'debug'].includes(PROFILE), `built by run.sh, in a known profile (${PROFILE})`);
    assert.ok(statSync(BINARY).mode & 0o111, 'usr/bin/keypool is executable');
    const kind = run('file', BINARY);
    if (PROFILE === 'release') assert.match(kind, /, stripped/, 'symbols are stripped from what ships');
    else assert.match(kind, /with debug_info, not stripped/, 'a dev-profile build keeps its line tables');
    const missing = run('ldd', BINARY).split('\n').filter((line) => line.includes('not found'));
    assert.deepEqual(missing, [], 'every shared library it links is on this system');
  });

  it('installs a valid desktop entry that starts the binary with its icon', () => {
    const file = join(ROOT, 'usr', 'share', 'applications', `${config.productName}.desktop`);
    run('desktop-file-validate', file); // throws with its complaints
    const entry = desktopEntry(file);
    assert.equal(entry.Name, config.productName);
    assert.equal(entry.Exec, config.mainBinaryName, 'Exec is the binary in /usr/bin');
    assert.equal(entry.Icon, config.mainBinaryName, 'the icon is the one installed under hicolor');
    assert.equal(entry.Comment, config.bundle.shortDescription);
    assert.equal(entry.Categories, 'Development;');
    assert.equal(entry.StartupWMClass, 'Keypool', "the window's WM_CLASS class, so docks match window and entry");
  });

  it('installs the icon in every size, from the real icon set', () => {
    for (const size of ICON_SIZES) {
      const file = join(ROOT, 'usr', 'share', 'icons', 'hicolor', `${size}x${size}`, 'apps', `${config.mainBinaryName}.png`);
      assert.ok(existsSync(file), `a ${size}px icon`);
      assert.deepEqual(pngSize(file), [size, size], `${file} is ${size}×${size}`);
    }
    const installed = readFileSync(join(ROOT, 'usr', 'share', 'icons', 'hicolor', '512x512', 'apps', 'keypool.png'));
    assert.deepEqual(installed, readFileSync(join(REPO, 'src-tauri', 'icons', 'icon.png')), 'the 512px icon is icons/icon.png');
  });

  it('runs: the window opens from the extracted binary', async () => {
    const app = await launchApp();
    try {
      await app.find('app-shell');
      assert.equal(readlinkSync(`/proc/${app.processId()}/exe`), BINARY, 'the app running is the one from the .deb');
      const status = await app.invoke('app:getStatus');
      assert.equal(status.value?.version, config.version, 'it reports the packaged version');
    } finally {
      await app.stop();
    }
  });
});

describe('the .rpm', () => {
  const rpm = join(BUNDLES ?? '', 'rpm', `${config.productName}-${config.version}-${config.bundle.linux.rpm.release}.${run('uname', '-m').trim()}.rpm`);
  const query = (format) => run('rpm', '--query', '--package', '--queryformat', format, rpm);

  it('names the app, its version, summary and licence', () => {
    assert.ok(existsSync(rpm), `${rpm} was built`);
    assert.equal(query('%{NAME} %{VERSION} %{RELEASE}'), `keypool ${config.version} ${config.bundle.linux.rpm.release}`);
    assert.equal(query('%{SUMMARY}'), config.bundle.shortDescription);
    assert.equal(query('%{LICENSE}'), config.bundle.license);
    assert.match(query('%{DESCRIPTION}'), /API key pool/);
  });

  it('holds the same files as the .deb and needs WebKitGTK and GTK', () => {
    const files = run('rpm', '--query', '--list', '--package', rpm).trim().split('\n');
    assert.ok(files.includes('/usr/bin/keypool'), 'the binary');
    assert.ok(files.includes(`/usr/share/applications/${config.productName}.desktop`), 'the desktop entry');
    for (const size of ICON_SIZES) {
      assert.ok(files.includes(`/usr/share/icons/hicolor/${size}x${size}/apps/keypool.png`), `the ${size}px icon`);
    }
    const requires = run('rpm', '--query', '--requires', '--package', rpm);
    assert.match(requires, /libwebkit2gtk-4\.1\.so\.0/);
    assert.match(requires, /libgtk-3\.so\.0/);
  });
});
