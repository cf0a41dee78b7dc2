/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

// The UI lives in ui/; Tauri serves ui/dist in builds and the dev server on port 1420 in
// `npm start`.
export default defineConfig({
  root,
  plugins: [react()],
  clearScreen: false,
  server: { port: 1420, strictPort: true, host: '127.0.0.1' },
  build: { outDir: 'dist', emptyOutDir: true, target: 'safari15' },
  test: {
    root,
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    // In UTC wherever they run, so a developer's time zone and its daylight-saving changes do not
    // change what the pages ask for; the tests of other zones set TZ themselves.
    env: { TZ: 'UTC' },
    include: ['src/**/*.test.{ts,tsx}'],
    // Vitest leaves a core free by default: one worker on a 2-core machine, where a worker per core
    // ran the suite in 90 s against 140 s (its files spend much of their time building jsdom).
    maxWorkers: availableParallelism(),
    // Bundled with the tests, so it calls the mocked `@tauri-apps/api/core` like the UI's own code.
    server: { deps: { inline: ['@tauri-apps/plugin-opener'] } },
  },
});
