// The waiting page's HTML (SPEC §16), rendered on the server for one state, locale and position:
// complete without JavaScript (place, estimate, a refresh in <noscript>), and the page's script
// (room.js, served beside it) takes over from the same markup. No inline script or style.

import type { Position } from '../types.js';
import type { RoomPage } from './options.js';
import type { RoomTexts } from './en.js';
import { isRtl } from './texts.js';
import { viewOf, type RoomState, type RoomView } from './view.js';

/** What one page view shows. */
export interface RoomRender {
  page: RoomPage;
  locale: string;
  texts: RoomTexts;
  state: RoomState;
  position: Position | null;
  /** The query of the page's URL to keep in its links (`?lang=…`), or ''. */
  search: string;
  /** The query of the no-JavaScript join form's action: `search` and the page's invite code (`&code=…`). */
  joinSearch?: string;
  /** The draw's commitment while a shuffled opening is ahead. */
  commitment?: string | null;
  /** The refusal's message (`refused`) or what went wrong (`problem`). */
  detail?: string;
  now?: number;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** The page's default template: the named slots a template of yours uses too. */
export const DEFAULT_TEMPLATE = `<!doctype html>
<html lang="{{lang}}" dir="{{dir}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}}</title>
{{head}}
</head>
<body>
{{room}}
</body>
</html>
`;

/** The whole page. */
export function renderRoom(r: RoomRender): string {
  const view = r.position ? viewOf(r.position, r.texts, r.locale, r.now ?? Date.now(), r.page.timeZone) : null;
  const slots: Record<string, string> = {
    lang: escapeHtml(r.locale),
    dir: isRtl(r.locale) ? 'rtl' : 'ltr',
    title: escapeHtml(r.texts.title),
    head: head(r),
    room: room(r, view),
  };
  return (r.page.template ?? DEFAULT_TEMPLATE).replace(/\{\{(lang|dir|title|head|room)\}\}/g, (_whole, name: string) => slots[name]!);
}

/** Stylesheets, the script, and the refresh for browsers without JavaScript (at the polling interval). */
function head(r: RoomRender): string {
  const lines = ['<link rel="stylesheet" href="room.css">'];
  if (r.page.stylesheetUrl) lines.push(`<link rel="stylesheet" href="${escapeHtml(r.page.stylesheetUrl)}">`);
  lines.push('<script src="room.js" defer></script>');
  const refresh = refreshSeconds(r);
  if (refresh !== null) lines.push(`<noscript><meta http-equiv="refresh" content="${refresh}"></noscript>`);
  return lines.join('\n');
}

/** Seconds between refreshes without JavaScript; none where nothing changes by itself. */
function refreshSeconds(r: RoomRender): number | null {
  if (r.state === 'problem') return 10;
  if (!r.position || r.position.status !== 'WAITING') return null;
  return Math.max(1, Math.ceil(r.position.pollingIntervalSeconds));
}

const hidden = (r: RoomRender, ...states: RoomState[]) => (states.includes(r.state) ? '' : ' hidden');
const text = (view: RoomView | null, slot: string) => escapeHtml(view?.slots[slot] ?? '');

function room(r: RoomRender, view: RoomView | null): string {
  const t = r.texts;
  const e = escapeHtml;
  const data = [
    `data-state="${r.state}"`,
    `data-locale="${e(r.locale)}"`,
    `data-texts="${e(JSON.stringify(t))}"`,
    r.position ? `data-position="${e(JSON.stringify({ ...r.position, entryToken: null }))}"` : '',
    `data-search="${e(r.search)}"`,
  ].filter(Boolean);
  const logo = r.page.logoUrl ? `<img class="waitgate-logo" src="${e(r.page.logoUrl)}" alt="">` : '';
  const ranked = view?.ranked ?? false;
  const commitment = r.commitment ? `<p class="waitgate-commitment" data-commitment>${e(t.commitment)}: <code>${e(r.commitment)}</code></p>` : '';
  return `<main class="waitgate-room" id="waitgate-room" ${data.join(' ')}>
<header class="waitgate-header">${logo}<h1>${e(t.heading)}</h1></header>
<p class="waitgate-sr" role="status" aria-live="polite" aria-atomic="true" id="waitgate-announce">${r.state === 'problem' ? '' : text(view, 'announce')}</p>
<section class="waitgate-waiting" data-when="waiting paused closed countdown"${hidden(r, 'waiting', 'paused', 'closed', 'countdown')}>
<div class="waitgate-notice" data-when="paused closed"${hidden(r, 'paused', 'closed')}>
<h2 data-slot="notice-title">${text(view, 'notice-title')}</h2>
<p data-slot="notice-message">${text(view, 'notice-message')}</p>
<p class="waitgate-hint" data-slot="notice-hint">${text(view, 'notice-hint')}</p>
</div>
<div class="waitgate-opening" data-when="countdown"${hidden(r, 'countdown')}>
<p>${e(t.opensIn)}</p>
<p class="waitgate-countdown" role="timer" aria-live="off" data-slot="countdown">${text(view, 'countdown')}</p>
<p data-slot="opens-at">${text(view, 'opens-at')}</p>
${commitment}
</div>
<p class="waitgate-place" data-slot="place-line" data-ranked="${ranked}">${text(view, 'place-line')}</p>
<p class="waitgate-odds" data-slot="odds">${text(view, 'odds')}</p>
<progress class="waitgate-progress" max="100" value="${view?.progress ?? 0}" aria-label="${e(t.progress)}"></progress>
<dl class="waitgate-figures">
<div><dt>${e(t.ahead)}</dt><dd data-slot="ahead">${text(view, 'ahead')}</dd></div>
<div><dt>${e(t.wait)}</dt><dd data-slot="wait">${text(view, 'wait')}</dd></div>
<div><dt>${e(t.total)}</dt><dd data-slot="total">${text(view, 'total')}</dd></div>
</dl>
<p class="waitgate-hint">${e(t.keepOpen)}</p>
</section>
<section class="waitgate-ready" data-when="ready"${hidden(r, 'ready')}>
<h2>${e(t.readyTitle)}</h2>
<p data-slot="expires">${text(view, 'expires')}</p>
<p><a class="waitgate-button" href="${e(r.page.continueUrl)}">${e(t.continue)}</a></p>
</section>
<section class="waitgate-join" data-when="not-entered"${hidden(r, 'not-entered')}>
<p>${e(t.notEntered)}</p>
<form method="post" action="room${e(r.joinSearch ?? r.search)}" enctype="text/plain"><button class="waitgate-button" type="submit">${e(t.join)}</button></form>
</section>
<section class="waitgate-challenge" data-when="challenge"${hidden(r, 'challenge')}>
<p>${e(t.challenge)}</p>
<noscript><p>${e(t.noScript)}</p></noscript>
</section>
<section class="waitgate-refused" data-when="refused"${hidden(r, 'refused')}>
<h2>${e(t.refusedTitle)}</h2>
<p data-slot="refused-message">${e(r.state === 'refused' ? (r.detail ?? t.closedText) : '')}</p>
</section>
<section class="waitgate-refused" data-when="held-elsewhere"${hidden(r, 'held-elsewhere')}>
<h2>${e(t.heldElsewhereTitle)}</h2>
<p>${e(t.heldElsewhereText)}</p>
</section>
<section class="waitgate-problem" data-when="problem"${hidden(r, 'problem')}>
<p data-slot="problem">${e(t.problem)}</p>
</section>
</main>`;
}
