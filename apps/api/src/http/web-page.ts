import { fileURLToPath } from 'node:url';
import express from 'express';
import type { RequestHandler } from 'express';

/** `apps/api/public/`, the same folder whether this module runs from `src/http/` or `dist/http/`. */
export const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

// The page loads only its own script and stylesheet and calls only this origin, so everything
// else is refused: an injected script or a framing page gets nowhere. Set on the page's files
// only, because /docs (Swagger UI) needs inline code that this policy would block.
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The browser page at `/`: plain static files. Mounted after the API routes, so it never shadows
 * them, and with `fallthrough` so a path that is not a file still reaches the JSON 404.
 */
export function webPage(): RequestHandler {
  return express.static(PUBLIC_DIR, {
    index: 'index.html',
    redirect: false,
    dotfiles: 'ignore',
    fallthrough: true,
    // Revalidate every time (ETag / Last-Modified answer 304): a new deployment shows at once.
    cacheControl: false,
    setHeaders(res) {
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('Content-Security-Policy', PAGE_CSP);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Referrer-Policy', 'no-referrer');
    },
  });
}
