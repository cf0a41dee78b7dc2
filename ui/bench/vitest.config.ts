/// <reference types="vitest/config" />
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The streaming benchmark: not a test (it asserts nothing about time), run on demand with
// `npx vitest run --config ui/bench/vitest.config.ts`. Same renderer and DOM as the UI tests.
const root = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root,
  plugins: [react()],
  test: {
    root,
    environment: 'jsdom',
    include: ['bench/**/*.bench.tsx'],
    testTimeout: 30 * 60_000,
  },
});
