import { defineConfig } from 'vitest/config';

// The page is served by the Go binary under /ui/ (internal/httpapi/ui.go rewrites the
// prefix when the API runs under a BASE_PATH). `npm run dev` proxies the API to :8080.
export default defineConfig({
  base: '/ui/',
  build: {
    outDir: 'dist/app',
    emptyOutDir: true,
    // No preload helper: it would name chunks by the absolute /ui/ base, which is wrong under a
    // BASE_PATH; dynamic imports are relative to the importing chunk and work anywhere.
    modulePreload: false,
    chunkSizeWarningLimit: 1200,
    rollupOptions: {
      output: {
        manualChunks(id: string) {
          if (id.includes('node_modules/echarts') || id.includes('node_modules/zrender')) return 'echarts';
          if (id.includes('node_modules/@codemirror') || id.includes('node_modules/@lezer') || id.includes('node_modules/codemirror')) return 'codemirror';
          return undefined;
        },
      },
    },
  },
  server: {
    proxy: {
      '/api': 'http://localhost:8080',
      '/ws': { target: 'ws://localhost:8080', ws: true },
    },
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
  },
});
