import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const here = fileURLToPath(new URL('.', import.meta.url));

// The portal is built into admin-api's bundle folder: admin-api serves it at {base_url}/portal (its
// PORTAL_DIR default) and the app's image carries it, with nothing loaded from another origin.
export default defineConfig({
  root: here,
  base: '/portal/',
  plugins: [react()],
  // `vite --config apps/portal/vite.config.mts`: the pages with live reload, the API of a running system (npm start).
  server: { proxy: { '/portal/api': process.env.PORTAL_API_URL ?? 'http://127.0.0.1:8080' } },
  build: {
    outDir: fileURLToPath(new URL('../../dist/apps/admin-api/portal', import.meta.url)),
    emptyOutDir: true,
    // The page's policy allows no inline script or style: every asset is a file.
    assetsInlineLimit: 0,
  },
});
