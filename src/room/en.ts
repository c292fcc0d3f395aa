// The waiting page's texts in English: the reference every locale follows, key for key.

/**
 * Every text of the page. `{place}`, `{duration}`, `{time}`, `{wait}` and `{stock}` are filled in where a
 * text names them (numbers, durations and times formatted with Intl for the locale).
 */
export interface RoomTexts {
  title: string;
  heading: string;
  place: string;
  notDrawn: string;
  drawn: string;
  ahead: string;
  wait: string;
  total: string;
  progress: string;
  anyMoment: string;
  about: string;
  unknown: string;
  onHold: string;
  atOpening: string;
  opensIn: string;
  opensAt: string;
  commitment: string;
  keepOpen: string;
  pausedTitle: string;
  pausedText: string;
  pausedHint: string;
  closedTitle: string;
  closedText: string;
  closedHint: string;
  readyTitle: string;
  readyText: string;
  continue: string;
  notEntered: string;
  join: string;
  refusedTitle: string;
  /** One place per identity (409 IDENTITY_LIMIT): the person's place is held under another member id. */
  heldElsewhereTitle: string;
  heldElsewhereText: string;
  challenge: string;
  noScript: string;
  problem: string;
  announce: string;
  /** With stock set: the stock left covers everyone ahead and this member ({stock}). */
  oddsLikely: string;
  /** With stock set: it likely runs out first ({stock}). */
  oddsUnlikely: string;
}

export const EN: RoomTexts = {
  title: 'Waiting room',
  heading: "You're in the queue",
  place: 'You are number {place} in line',
  notDrawn: 'not drawn yet',
  drawn: 'Places in line are drawn at random at the opening: everyone who joins before then has the same chance.',
  ahead: 'People ahead of you',
  wait: 'Estimated wait',
  total: 'Waiting in total',
  progress: 'Progress through the queue',
  anyMoment: 'any moment now',
  about: 'about {duration}',
  unknown: 'not known yet',
  onHold: 'on hold',
  atOpening: 'starts at the opening',
  opensIn: 'The sale opens in',
  opensAt: 'at {time}',
  commitment: 'Commitment of the draw (SHA-256 of its seed, published before the opening)',
  keepOpen: "Keep this page open. We'll let you in automatically; there is no need to refresh.",
  pausedTitle: 'The sale is paused',
  pausedText: 'We will be back shortly.',
  pausedHint: 'You keep your place in line. This page carries on by itself when the sale resumes.',
  closedTitle: 'The sale is closed',
  closedText: 'Nobody more is being let in for now.',
  closedHint: 'You keep your place in line in case the sale reopens.',
  readyTitle: "It's your turn!",
  readyText: 'Your entry is reserved until {time}.',
  continue: 'Continue',
  notEntered: 'You are not in the queue yet.',
  join: 'Join the queue',
  refusedTitle: 'This queue is closed',
  heldElsewhereTitle: 'You already have a place in line',
  heldElsewhereText: 'Only one place per person is allowed, and yours is held from another account or device. You can join once that place is used or given up.',
  challenge: 'Checking your browser before you join the queue…',
  noScript: 'This check needs JavaScript: turn it on, then join again.',
  problem: 'We could not reach the queue just now; this page tries again by itself.',
  announce: 'You are number {place} in line. Estimated wait: {wait}.',
  oddsLikely: '{stock} left: enough for everyone ahead of you, and you.',
  oddsUnlikely: '{stock} left: likely gone before your turn. You keep your place in case some come back.',
};
