/**
 * Builds the admin console into ui/dist, served by the gateway at /ui (src/http/routes/console-routes.ts).
 * Asset names carry a content hash, so the gateway may cache them for a year; index.html is never cached.
 */
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/ui/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // No source maps in the served build: they would double the download and expose nothing useful.
    sourcemap: false,
  },
  server: {
    // `npm run dev:ui`: the console on :5173 with its API calls proxied to a gateway on :4000.
    proxy: { '/ui/api': 'http://127.0.0.1:4000' },
  },
});
