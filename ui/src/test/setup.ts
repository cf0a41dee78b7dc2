import '@testing-library/jest-dom/vitest';
import { cleanup } from '@testing-library/react';
import { afterEach, beforeAll } from 'vitest';
import { preloadMarkdown } from '../features/chat/markdown/LazyMarkdown';

afterEach(() => cleanup());

// The Markdown renderer loads on first use in the app; the tests render with it from the start.
// In `beforeAll`, after the test file's `vi.mock`s are in place, so it imports the mocked modules.
beforeAll(async () => {
  await preloadMarkdown();
});
