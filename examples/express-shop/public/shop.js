// The shop's page for an admitted shopper: lists the products and orders one. No token to
// handle here: the waiting room set it in the HttpOnly cookie `waitgate_pass`, which the
// browser sends with the order and requireEntryToken reads.

const $ = (selector) => document.querySelector(selector);

async function showProducts() {
  const products = await (await fetch('/api/products')).json();
  $('#products').replaceChildren(
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
      button.addEventListener('click', () => order(product));
      item.append(button, stock);
      return item;
    }),
  );
}

async function order(product) {
  const response = await fetch('/api/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
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
    await showProducts(); // the token is still ours
  else $('#admitted').hidden = true;
}

await showProducts();
