// The waiting page's options (SPEC §16): `page` of the queue routes, checked once. `false` turns
// the page (and its CSS and script) off; anything else is the page's look, texts and next step.

import { z } from 'zod';
import { WaitgateConfigError } from '../errors.js';
import { parseStrict } from '../options.js';
import type { RoomTexts } from './en.js';

/** Options of the waiting page, the queue routes' `page` (docs/waiting-room.md). */
export interface RoomPageOptions {
  /** Where a READY member goes next (a path of your site, or an http(s) URL). Default `/`. */
  continueUrl?: string;
  /** Path of the `waitgate_pass` cookie: the part of your site whose guards read it. Default `/`. */
  cookiePath?: string;
  /** READY: answer 303 to `continueUrl` (default true), or show a link to it. */
  redirect?: boolean;
  /** A logo shown above the page's heading (a URL your CSP allows, e.g. a path of your site). */
  logoUrl?: string;
  /** CSS custom properties of the page, e.g. `{ '--waitgate-accent': '#0a7' }` (served in room.css: no inline style). */
  theme?: Record<string, string>;
  /** A stylesheet of yours loaded after the page's own. */
  stylesheetUrl?: string;
  /** Texts by locale (`{ en: { heading: 'In line for the drop' } }`); a locale not built in is added (English fills its gaps). */
  texts?: Record<string, Partial<RoomTexts>>;
  /** The locale when neither `?lang=` nor Accept-Language names one the page has. Default `en`. */
  defaultLocale?: string;
  /** A whole page of yours with the named slots `{{lang}}`, `{{dir}}`, `{{title}}`, `{{head}}` and `{{room}}`. */
  template?: string;
  /** The time zone the server renders the opening time in (the script shows the browser's own). Default: the server's. */
  timeZone?: string;
}

/** The page options, checked, with their defaults. */
export interface RoomPage {
  continueUrl: string;
  cookiePath: string;
  redirect: boolean;
  logoUrl: string | null;
  theme: Record<string, string>;
  stylesheetUrl: string | null;
  texts: Record<string, Partial<RoomTexts>>;
  defaultLocale: string;
  template: string | null;
  timeZone: string | undefined;
}

const url = z
  .string()
  .max(2048)
  .refine((u) => (u.startsWith('/') && !u.startsWith('//')) || /^https?:\/\/[^\s"'<>]+$/.test(u), 'must be a path (/next) or an http(s) URL')
  .refine((u) => !/[\s"'<>]/.test(u), 'must not contain spaces, quotes or angle brackets');

const cssValue = z
  .string()
  .max(200)
  .refine((v) => !/[;{}<>\\]/.test(v), 'must not contain ; { } < > or \\');

/** A locale of `texts`: a language tag Intl takes (one it refuses would fail every page rendered in it). */
const locale = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'keys must be locales (en, pt-BR)')
  .refine((tag) => {
    try {
      Intl.getCanonicalLocales(tag);
      return true;
    } catch {
      return false;
    }
  }, 'must be a valid BCP 47 language tag (en, pt-BR)');

const schema = z.strictObject({
  continueUrl: url.default('/'),
  cookiePath: z
    .string()
    .regex(/^\/[A-Za-z0-9._~\-/]*$/, 'must be a path like /checkout')
    .default('/'),
  redirect: z.boolean().default(true),
  logoUrl: url.optional(),
  theme: z.record(z.string().regex(/^--[a-z0-9-]{1,64}$/, 'keys must be CSS custom properties (--name)'), cssValue).default({}),
  stylesheetUrl: url.optional(),
  texts: z.record(locale, z.record(z.string(), z.string().max(500))).default({}),
  defaultLocale: z.string().default('en'),
  template: z
    .string()
    .refine((t) => t.includes('{{room}}') && t.includes('{{head}}'), 'must contain the {{head}} and {{room}} slots')
    .optional(),
  timeZone: z
    .string()
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: tz });
        return true;
      } catch {
        return false;
      }
    }, 'must be an IANA time zone')
    .optional(),
});

/** Zod shape of the `page` route option (validated with the other queue-route options). */
export const pageOptionShape = {
  page: z.union([z.literal(false), z.custom<RoomPageOptions>((v) => typeof v === 'object' && v !== null)]).optional(),
};

/** The page of validated route options: null for `page: false`. @throws {@link WaitgateConfigError} */
export function parsePage(page: false | RoomPageOptions | undefined): RoomPage | null {
  if (page === false) return null;
  try {
    const parsed = parseStrict(schema, page ?? {});
    return {
      ...parsed,
      logoUrl: parsed.logoUrl ?? null,
      stylesheetUrl: parsed.stylesheetUrl ?? null,
      template: parsed.template ?? null,
      timeZone: parsed.timeZone,
    };
  } catch (error) {
    if (error instanceof WaitgateConfigError) throw new WaitgateConfigError(`page.${error.option}`, error.message.replace(/^Invalid option "[^"]*": /, ''));
    throw error;
  }
}
