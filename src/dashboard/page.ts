// The dashboard page: one self-contained HTML document (its script, its style and uPlot inlined),
// and the Content-Security-Policy that lets exactly those inline parts run, by hash.

import { createHash } from 'node:crypto';
import { assets } from './assets.generated.js';

/** The page and the policy it is served with. Built once per dashboard. */
export interface Page {
  html: string;
  csp: string;
}

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Replaces each `{{name}}` of the template; the values are inserted as they are (no `$` patterns). */
function fill(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`dashboard page: no value for ${match}`);
    return value;
  });
}

/**
 * Builds the page. The scripts and styles are inline, allowed by their SHA-256 in the
 * policy; nothing else may load (no CDN, no other origin), and the page may not be framed.
 */
export function buildPage(options: { title: string; readOnly: boolean }): Page {
  const html = fill(assets.pageHtml, {
    title: escapeHtml(options.title),
    readOnly: options.readOnly ? 'true' : 'false',
    uplotStyle: assets.uplotStyle,
    pageStyle: assets.pageStyle,
    uplotScript: assets.uplotScript,
    pageScript: assets.pageScript,
  });
  // The hashes are of the elements' text as it stands in the page, whitespace included
  // (build-dashboard-assets.mjs checks that no inlined part holds a closing tag).
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  if (scripts.length !== 2 || styles.length !== 2 || /<(script|style)\s/.test(html)) throw new Error('dashboard page: unexpected <script> or <style> elements');
  const csp = [
    "default-src 'none'",
    `script-src ${scripts.map(hash).join(' ')}`,
    `style-src ${styles.map(hash).join(' ')}`,
    'img-src data:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}
