/**
 * The console page and its scripts. No build step: the page is ES modules written against Preact + htm
 * (a small front-end framework with tagged-template markup) and Chart.js, all served as the npm packages
 * ship them, resolved by an import map:
 *
 * - `GET /` → index.html with the import map inline; its CSP hash is computed here, so the Content
 *   Security Policy allows that one inline script and nothing else inline.
 * - `GET /assets/*` → the page's own modules and stylesheet (src/adapters/console/public/).
 * - `GET /vendor/*` → exactly the library files listed in {@link VENDOR_FILES}, nothing else of node_modules.
 *
 * None of this is secret; the data behind it (/console/api) needs the operator token.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { Router, type RequestHandler } from 'express';

const publicDir = fileURLToPath(new URL('./public/', import.meta.url));

/** Where a bare module specifier resolves from this file (the package's `exports`). */
function resolved(specifier: string): string {
  return fileURLToPath(import.meta.resolve(specifier));
}

/** URL path under /vendor → file on disk. Chart.js's entry imports `./chunks/index.js` relatively. */
const VENDOR_FILES: Readonly<Record<string, string>> = (() => {
  const chart = resolved('chart.js');
  return {
    'preact.mjs': resolved('preact'),
    'preact-hooks.mjs': resolved('preact/hooks'),
    'htm.mjs': resolved('htm'),
    'chart.js/chart.js': chart,
    'chart.js/chunks/index.js': fileURLToPath(new URL('./chunks/index.js', `file://${chart}`)),
    'kurkle-color.mjs': resolved('@kurkle/color'),
  };
})();

const IMPORT_MAP = JSON.stringify({
  imports: {
    preact: '/vendor/preact.mjs',
    'preact/hooks': '/vendor/preact-hooks.mjs',
    htm: '/vendor/htm.mjs',
    'chart.js': '/vendor/chart.js/chart.js',
    '@kurkle/color': '/vendor/kurkle-color.mjs',
  },
});

const CSP = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash('sha256').update(IMPORT_MAP).digest('base64')}'`,
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
].join('; ');

const INDEX_HTML = readFileSync(new URL('./public/index.html', import.meta.url), 'utf8').replace('<!--IMPORT_MAP-->', `<script type="importmap">${IMPORT_MAP}</script>`);

/** Security headers of every console response: no framing, no sniffing, no referrer, the CSP above. */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

/** GET /, /assets/*, /vendor/*. */
export function consolePage(): Router {
  const router = Router();
  router.get('/', (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('html').send(INDEX_HTML);
  });
  router.use('/assets', express.static(publicDir, { index: false, dotfiles: 'ignore', fallthrough: true, setHeaders: (res) => res.setHeader('Cache-Control', 'no-cache') }));
  router.get('/vendor/*path', (req, res, next) => {
    const file = VENDOR_FILES[(req.params).path.join('/')];
    if (!file) return next();
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.type('text/javascript').sendFile(file);
  });
  return router;
}
