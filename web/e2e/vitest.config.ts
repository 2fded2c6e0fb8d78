import { defineConfig } from 'vitest/config';

// The browser tests (npm run test:browser, make browser-test): headless
// Chromium driven by playwright-core against a running Pulka whose address is
// PULKA_E2E_BASE_URL (scripts/browser-test.sh starts one with pulka-local).
// Files run one after another: they share two cores with the services.
export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['**/*.e2e.ts'],
    environment: 'node',
    pool: 'forks',
    fileParallelism: false,
    // Node 20 has a WebSocket client only behind this flag (Node 22: always).
    execArgv: typeof WebSocket === 'undefined' ? ['--experimental-websocket'] : [],
    testTimeout: 240_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});
