// The waiting-room page: waits with waitgate/client, then shows the order buttons.
import { QueueClientError, waitForEntry } from '/vendor/waitgate/client.js';

const $ = (selector) => document.querySelector(selector);
let firstRank = null;

function showPosition(position) {
  if (position.status !== 'WAITING') return;
  // rank is null while the place is still to be drawn (a shuffled pre-queue before its opening).
  const ranked = typeof position.rank === 'number';
  if (ranked) firstRank ??= Math.max(position.rank, 1);
  $('#rank-line').hidden = !ranked;
  $('#drawn-line').hidden = ranked;
  if (ranked) $('[data-testid="rank-number"]').textContent = String(position.rank + 1);
  $('[data-testid="ahead"]').textContent = ranked ? String(position.rank) : 'not drawn yet';
  $('[data-testid="wait"]').textContent = waitText(position);
  showOdds(position);
  $('[data-testid="total"]').textContent = String(position.currentTotalWaitingCount);
  const progress = ranked && firstRank !== null ? Math.max(0, Math.round(100 * (1 - position.rank / (firstRank + 1)))) : 0;
  $('.progress').setAttribute('aria-valuenow', String(progress));
  $('.bar').style.width = `${progress}%`;
  showNotice(position);
  showOpening(position.opensAt);
}

// The stock left, and whether it likely covers everyone ahead and this shopper (null without stock).
function showOdds({ stockLeft, likelyServed }) {
  const odds = $('#odds');
  odds.hidden = typeof likelyServed !== 'boolean';
  if (odds.hidden) return;
  odds.dataset.likely = String(likelyServed);
  odds.textContent = likelyServed
    ? `${stockLeft} pairs left: enough for everyone ahead of you, and you.`
    : `${stockLeft} pairs left: they will likely be gone before your turn. You keep your place in case some come back.`;
}

function waitText(position) {
  const seconds = position.estimatedWaitSeconds;
  if (typeof seconds === 'number') return seconds <= 1 ? 'any moment now' : `about ${formatSeconds(seconds)}`;
  if (position.opensAt !== null) return 'starts at the opening';
  if (position.queueMode === 'paused' || position.queueMode === 'closed') return 'on hold';
  return 'not known yet';
}

function formatSeconds(seconds) {
  return seconds < 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
}

// The operator's banner: paused (the member keeps its place) or closed (nobody is let in).
const NOTICES = {
  paused: {
    title: 'The sale is paused',
    fallback: 'We will be back shortly.',
    hint: 'You keep your place in line. This page carries on by itself when the sale resumes.',
  },
  closed: { title: 'The sale is closed', fallback: 'Nobody more is being let in for now.', hint: 'You keep your place in line in case the sale reopens.' },
};

function showNotice(position) {
  const notice = NOTICES[position.queueMode];
  const box = $('#notice');
  if (!notice) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.dataset.mode = position.queueMode;
  setText('[data-testid="notice-title"]', notice.title);
  setText('[data-testid="notice-message"]', position.message ?? notice.fallback);
  setText('[data-testid="notice-hint"]', notice.hint);
}

/** Sets text only when it changed, so the live region does not repeat itself on every poll. */
function setText(selector, text) {
  const element = $(selector);
  if (element.textContent !== text) element.textContent = text;
}

// The countdown to a scheduled opening, ticking on this device's clock each second until
// the next position says the queue is open (opensAt null).
let opensAt = null;
let tick = null;

function showOpening(next) {
  opensAt = typeof next === 'number' ? next : null;
  $('#opening').hidden = opensAt === null;
  clearTimeout(tick);
  if (opensAt === null) return;
  setText('[data-testid="opens-at"]', new Date(opensAt).toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' }));
  renderCountdown();
}

function renderCountdown() {
  const left = opensAt - Date.now();
  setText('[data-testid="countdown"]', formatCountdown(Math.max(0, Math.ceil(left / 1000))));
  // Next tick on the next whole second of what is left.
  if (left > 0) tick = setTimeout(renderCountdown, left % 1000 || 1000);
}

function formatCountdown(totalSeconds) {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = String(totalSeconds % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}

async function showProducts(entryToken) {
  const products = await (await fetch('/api/products')).json();
  const list = $('#products');
  list.replaceChildren(
    ...products.map((product) => {
      const item = document.createElement('li');
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = `Order ${product.name} — $${(product.priceCents / 100).toFixed(2)}`;
      button.dataset.productId = String(product.id);
      button.disabled = product.stock === 0;
      const stock = document.createElement('span');
      stock.className = 'stock';
      stock.textContent = product.stock === 0 ? 'sold out' : `${product.stock} left`;
      button.addEventListener('click', () => order(entryToken, product));
      item.append(button, stock);
      return item;
    }),
  );
}

async function order(entryToken, product) {
  const response = await fetch('/api/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-entry-token': entryToken },
    body: JSON.stringify({ productId: product.id }),
  });
  const body = await response.json();
  $('#result').hidden = false;
  if (response.status === 201) {
    $('[data-testid="result"]').textContent = `Order #${body.order.id} confirmed: ${product.name}. Thank you!`;
    $('#admitted').hidden = true;
    return;
  }
  $('[data-testid="result"]').textContent = body.error?.message ?? `The order failed (HTTP ${response.status}).`;
  if (body.error?.code === 'OUT_OF_STOCK')
    await showProducts(entryToken); // the token is still ours
  else $('#admitted').hidden = true;
}

// Closing the tab gives the place up at once (a DELETE sent with keepalive), so the
// member is not admitted later to hold a token nobody uses.
const leaving = new AbortController();
addEventListener('pagehide', () => leaving.abort());
try {
  const grant = await waitForEntry({ url: '/queue', onPosition: showPosition, signal: leaving.signal, leaveOnAbort: true });
  clearTimeout(tick);
  $('#waiting').hidden = true;
  $('#admitted').hidden = false;
  $('[data-testid="expires"]').textContent = new Date(grant.expiresAt).toLocaleTimeString();
  await showProducts(grant.entryToken);
} catch (error) {
  clearTimeout(tick);
  if (error instanceof QueueClientError && error.code === 'QUEUE_CLOSED') {
    // Closed to new shoppers (e.g. sold out): the message is the operator's. The panel
    // is shown before its text is set, so the live region announces the text.
    $('#waiting').hidden = true;
    $('#sold-out').hidden = false;
    $('[data-testid="sold-out"]').textContent = error.message;
  } else {
    $('#problem').hidden = false;
    $('[data-testid="problem"]').textContent = `We could not keep your place: ${error.message}`;
  }
}
