import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { preloadMarkdown } from '../features/chat/markdown/LazyMarkdown';
import { LOCALES, loadDictionary } from '../i18n';
import { NO_PREFERENCES, adoptPreferences } from '../preferences';

// Each test starts as a first launch: no preferences read yet (the module keeps them between renders).
beforeEach(() => adoptPreferences(NO_PREFERENCES));
afterEach(() => cleanup());

// The Markdown renderer loads on first use in the app; the tests render with it from the start.
// In `beforeAll`, after the test file's `vi.mock`s are in place, so it imports the mocked modules.
// The languages other than English load when chosen; the tests speak any of them at once.
beforeAll(async () => {
  await preloadMarkdown();
  await Promise.all(LOCALES.map(loadDictionary));
});

// jsdom lays nothing out: every box is 0 px high. The key table draws only the rows that fit its
// scrolling box (`@tanstack/react-virtual` reads the box's `clientHeight`), so the box is given a
// window's height here, and rows (0 px high) all fit it; a test of the virtual window itself gives
// rows a height of their own (`offsetHeight`).
Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
  configurable: true,
  get(this: HTMLElement) {
    return this.classList.contains('key-table-scroll') ? 720 : 0;
  },
});
