// The waiting page's texts: English (en.ts, the reference), the built-in locales (locales-*.ts), the page's own overrides, and the negotiation from `?lang=` and Accept-Language.

import { EN, type RoomTexts } from './en.js';
import { EUROPE } from './locales-europe.js';
import { WORLD } from './locales-world.js';

/** The built-in locales, by language tag. */
export const LOCALES: Readonly<Record<string, RoomTexts>> = { en: EN, ...EUROPE, ...WORLD };

/** Languages written right to left. */
const RTL = new Set(['ar', 'he', 'fa', 'ur']);

/** Whether a locale is written right to left. */
export function isRtl(locale: string): boolean {
  return RTL.has(locale.split('-')[0]!.toLowerCase());
}

/** The texts of a locale: the built-in ones (English filling any gap) under the page's overrides. */
export function textsFor(locale: string, overrides: Record<string, Partial<RoomTexts>>): RoomTexts {
  const base = LOCALES[locale] ?? LOCALES[locale.split('-')[0]!] ?? EN;
  return { ...EN, ...base, ...overrides[locale] };
}

/**
 * The page's locale: `?lang=` when the page has it, else the best of Accept-Language (by q, a
 * region falling back to its language), else `fallback`.
 */
export function negotiateLocale(lang: string | null | undefined, acceptLanguage: string | undefined, available: readonly string[], fallback: string): string {
  const find = (tag: string): string | undefined => {
    const lower = tag.toLowerCase();
    return available.find((a) => a.toLowerCase() === lower) ?? available.find((a) => a.toLowerCase() === lower.split('-')[0]);
  };
  if (lang) {
    const chosen = find(lang);
    if (chosen) return chosen;
  }
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? '1',
      );
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((l) => l.tag !== '' && l.tag !== '*' && l.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranked) {
    const chosen = find(tag);
    if (chosen) return chosen;
  }
  return find(fallback) ?? 'en';
}

export { EN, type RoomTexts };
