// The waiting page's script (served as <prefix>/room.js; bundled by scripts/build-room-assets.mjs):
// takes over the server-rendered page. It follows the member's place on the event stream
// (<prefix>/events) while that is open and polls <prefix>/position otherwise, enters through
// <prefix>/enter when the member is not in line yet (solving a proof-of-work challenge itself),
// and on READY reloads the page, whose answer sets the pass cookie and leads on.

import { isPowChallenge, solvePowChallenge } from '../../client/pow.js';
import type { Position } from '../../types.js';
import type { RoomTexts } from '../en.js';
import { formatCountdown, viewOf, type RoomState } from '../view.js';
import { reconnectDelayMs, retryAfterRefusalMs } from './reconnect.js';

/** Announcements of an unchanged state come at most this often (SPEC §16: once a minute). */
const ANNOUNCE_EVERY_MS = 60_000;

const root = document.getElementById('waitgate-room');
if (root) start(root);

function start(root: HTMLElement): void {
  const texts = JSON.parse(root.dataset.texts ?? '{}') as RoomTexts;
  const locale = root.dataset.locale ?? 'en';
  const search = root.dataset.search ?? '';
  let position = root.dataset.position ? (JSON.parse(root.dataset.position) as Position) : null;
  let state = (root.dataset.state ?? 'problem') as RoomState;
  let announced = { at: Date.now(), state };
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let tickTimer: ReturnType<typeof setTimeout> | undefined;
  let stream: EventSource | null = null;
  /** Stream failures since the last event came through it, and the timer of the next attempt. */
  let streamFailures = 0;
  let reconnectTimer: ReturnType<typeof setTimeout> | undefined;
  let done = false;

  const slot = (name: string) => root.querySelector<HTMLElement>(`[data-slot="${name}"]`);
  const setText = (name: string, text: string) => {
    const element = slot(name);
    if (element && element.textContent !== text) element.textContent = text;
  };

  function show(next: RoomState): void {
    state = next;
    root.dataset.state = next;
    for (const element of root.querySelectorAll<HTMLElement>('[data-when]')) element.hidden = !element.dataset.when!.split(' ').includes(next);
  }

  function announce(next: RoomState, text: string): void {
    const now = Date.now();
    if (next === announced.state && now - announced.at < ANNOUNCE_EVERY_MS) return;
    announced = { at: now, state: next };
    const live = document.getElementById('waitgate-announce');
    if (live) live.textContent = text;
  }

  function stop(): void {
    done = true;
    clearTimeout(pollTimer);
    clearTimeout(tickTimer);
    clearTimeout(reconnectTimer);
    stream?.close();
  }

  function update(next: Position): void {
    if (done) return;
    position = next;
    if (next.status === 'READY') {
      stop();
      location.replace(`room${search}`); // the page's answer sets the pass cookie
      return;
    }
    if (next.status !== 'WAITING') {
      stop();
      show('not-entered');
      announce('not-entered', texts.notEntered);
      return;
    }
    const view = viewOf(next, texts, locale, Date.now());
    for (const [name, text] of Object.entries(view.slots)) if (name !== 'announce') setText(name, text);
    slot('place-line')?.setAttribute('data-ranked', String(view.ranked));
    const bar = root.querySelector<HTMLProgressElement>('progress');
    if (bar) bar.value = view.progress;
    root.querySelector('[data-commitment]')?.toggleAttribute('hidden', next.opensAt === null);
    show(view.state);
    announce(view.state, view.slots.announce!);
    tick();
  }

  /** The countdown ticks on this device's clock between updates; at the opening it asks again. */
  function tick(): void {
    clearTimeout(tickTimer);
    const opensAt = position?.opensAt ?? null;
    if (opensAt === null || done) return;
    const left = opensAt - Date.now();
    setText('countdown', formatCountdown(left / 1000, locale));
    if (left > 0) tickTimer = setTimeout(tick, left % 1000 || 1000);
    else if (!stream) schedulePoll(0);
  }

  function schedulePoll(seconds: number): void {
    clearTimeout(pollTimer);
    if (!done) pollTimer = setTimeout(poll, seconds * 1000);
  }

  async function poll(): Promise<void> {
    let next = (position?.pollingIntervalSeconds ?? 5) * 1000;
    try {
      const response = await fetch('position', { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (response.ok) {
        update((await response.json()) as Position);
        next = (position?.pollingIntervalSeconds ?? 5) * 1000;
      } else {
        if (!position) show('problem');
        const wait = retryAfterRefusalMs(response.status, response.headers.get('retry-after'), next);
        if (wait === null) return; // refused for good (e.g. signed out): asking again changes nothing
        next = Math.max(next, wait);
      }
    } catch {
      if (!position) show('problem');
    }
    if (!stream) schedulePoll(next / 1000);
  }

  /**
   * The event stream while it is open; polling while it is not (absent, full: 503, or cut),
   * and another attempt after a backoff (reconnect.ts). The browser's own retry is not left
   * to run: it gives up on a refusal, and it would retry a cut stream without polling meanwhile.
   */
  function follow(): void {
    if (done) return;
    if (typeof EventSource !== 'function') return schedulePoll(position?.pollingIntervalSeconds ?? 1);
    const source = new EventSource('events');
    stream = source;
    const onData = (event: MessageEvent<string>) => {
      streamFailures = 0; // an event came through: the next failure starts the backoff afresh
      update(JSON.parse(event.data) as Position);
    };
    source.addEventListener('position', onData);
    source.addEventListener('ready', onData);
    source.onopen = () => clearTimeout(pollTimer);
    source.onerror = () => {
      source.close();
      if (stream !== source || done) return;
      stream = null;
      schedulePoll(position?.pollingIntervalSeconds ?? 1);
      clearTimeout(reconnectTimer);
      reconnectTimer = setTimeout(follow, reconnectDelayMs(streamFailures++));
    };
    schedulePoll(position?.pollingIntervalSeconds ?? 1); // until the stream opens
  }

  /** An invite code from the page's address (`?code=`), sent in the enter's body (docs/fair-entry.md). */
  const inviteCode = new URLSearchParams(location.search).get('code');

  /** Joins the line through the gate: a proof-of-work challenge is solved here; others are handed to the app (event `waitgate:challenge`). */
  async function enter(solution?: { header: string; value: string }): Promise<void> {
    let response: Response;
    try {
      const headers: Record<string, string> = solution ? { [solution.header]: solution.value } : {};
      if (inviteCode) headers['content-type'] = 'application/json';
      const body = inviteCode ? JSON.stringify({ code: inviteCode }) : null;
      response = await fetch('enter', { method: 'POST', headers, body, credentials: 'same-origin' });
    } catch {
      show('problem');
      return void setTimeout(() => void enter(solution), 5000);
    }
    if (response.ok) {
      update((await response.json()) as Position);
      return follow();
    }
    const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string; challenge?: unknown } } | null;
    const error = body?.error;
    if (error?.code === 'CHALLENGE_REQUIRED') {
      show('challenge');
      announce('challenge', texts.challenge);
      const challenge = error.challenge;
      if (isPowChallenge(challenge)) return enter({ header: challenge.header, value: await solvePowChallenge(challenge) });
      const submit = (header: string, value: string) => void enter({ header, value });
      root.dispatchEvent(new CustomEvent('waitgate:challenge', { detail: { challenge, submit }, bubbles: true }));
      return;
    }
    if (error?.code === 'IDENTITY_LIMIT') {
      show('held-elsewhere');
      announce('held-elsewhere', `${texts.heldElsewhereTitle}. ${texts.heldElsewhereText}`);
      return;
    }
    if (error?.code === 'QUEUE_CLOSED' || error?.code === 'CODE_INVALID') {
      setText('refused-message', error.message ?? texts.closedText);
      show('refused');
      announce('refused', `${texts.refusedTitle}. ${error.message ?? ''}`);
      return;
    }
    show('problem');
    const wait = retryAfterRefusalMs(response.status, response.headers.get('retry-after'), 5000);
    if (wait !== null) setTimeout(() => void enter(solution), wait);
  }

  if (state === 'not-entered') void enter();
  else if (state !== 'refused' && state !== 'held-elsewhere' && state !== 'ready' && state !== 'challenge') {
    if (position) update(position);
    follow();
  }
}
