import { defineConfig } from 'vitest/config';
import { gzipTwins } from './scripts/gzip-twins.ts';

// The build lands inside the gateway's Go module, which embeds it
// (services/gateway/internal/webui, //go:embed all:dist). Hashed file names
// let the gateway cache assets for a year and keep index.html uncached.
export default defineConfig({
  plugins: [gzipTwins()],
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../services/gateway/internal/webui/dist/app',
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
    sourcemap: false,
    reportCompressedSize: true,
  },
  server: {
    // `npm run dev` talks to a gateway on this machine.
    proxy: {
      '/api': 'http://127.0.0.1:8080',
      '/ws': { target: 'ws://127.0.0.1:8080', ws: true },
    },
  },
  test: {
    environment: 'happy-dom',
    include: ['src/**/*.test.{ts,tsx}'],
  },
});
