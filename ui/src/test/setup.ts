import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { preloadMarkdown } from '../features/chat/markdown/LazyMarkdown';
import { NO_PREFERENCES, adoptPreferences } from '../preferences';

// Each test starts as a first launch: no preferences read yet (the module keeps them between renders).
beforeEach(() => adoptPreferences(NO_PREFERENCES));
afterEach(() => cleanup());

// The Markdown renderer loads on first use in the app; the tests render with it from the start.
// In `beforeAll`, after the test file's `vi.mock`s are in place, so it imports the mocked modules.
beforeAll(async () => {
  await preloadMarkdown();
});
