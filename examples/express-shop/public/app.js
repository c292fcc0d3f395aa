// The waiting-room page: waits with waitgate/client, then shows the order buttons.
import { waitForEntry } from '/vendor/waitgate/client.js';

const $ = (selector) => document.querySelector(selector);
let firstRank = null;

function showPosition(position) {
  if (position.status !== 'WAITING') return;
  firstRank ??= Math.max(position.rank, 1);
  $('[data-testid="rank-number"]').textContent = String(position.rank + 1);
  $('[data-testid="ahead"]').textContent = String(position.rank);
  $('[data-testid="wait"]').textContent = position.estimatedWaitSeconds <= 1 ? 'any moment now' : `about ${formatSeconds(position.estimatedWaitSeconds)}`;
  $('[data-testid="total"]').textContent = String(position.currentTotalWaitingCount);
  const progress = Math.round(100 * (1 - position.rank / (firstRank + 1)));
  $('.progress').setAttribute('aria-valuenow', String(progress));
  $('.bar').style.width = `${progress}%`;
}

function formatSeconds(seconds) {
  return seconds < 90 ? `${seconds} s` : `${Math.ceil(seconds / 60)} min`;
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
  if (body.error?.code === 'OUT_OF_STOCK') await showProducts(entryToken); // the token is still ours
  else $('#admitted').hidden = true;
}

// Closing the tab gives the place up at once (a DELETE sent with keepalive), so the
// member is not admitted later to hold a token nobody uses.
const leaving = new AbortController();
addEventListener('pagehide', () => leaving.abort());
try {
  const grant = await waitForEntry({ url: '/queue', onPosition: showPosition, signal: leaving.signal, leaveOnAbort: true });
  $('#waiting').hidden = true;
  $('#admitted').hidden = false;
  $('[data-testid="expires"]').textContent = new Date(grant.expiresAt).toLocaleTimeString();
  await showProducts(grant.entryToken);
} catch (error) {
  $('#problem').hidden = false;
  $('[data-testid="problem"]').textContent = `We could not keep your place: ${error.message}`;
}
