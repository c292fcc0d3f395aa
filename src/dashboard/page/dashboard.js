// The waitgate dashboard in the browser: polls GET api/queues/:name every second, keeps the last
// ten minutes for the charts (uPlot), shows the controls in force, and sends changes to POST
// api/controls after a confirmation. Plain ES2020, no build step; inlined into the page.
/* global uPlot */
(() => {
  'use strict';

  const POLL_MS = 1000;
  const HISTORY_POINTS = 600; // ten minutes at one point a second
  const STALE_MS = 5000;
  const readOnly = document.body.dataset.readOnly === 'true';

  // Relative API addresses resolve under the mount only from its trailing slash.
  if (!location.pathname.endsWith('/')) window.history.replaceState(null, '', `${location.pathname}/${location.search}${location.hash}`);
  const api = (path) => new URL(path, location.href).toString();

  const $ = (id) => document.getElementById(id);
  const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
  const rateFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
  const count = (n) => (typeof n === 'number' && Number.isFinite(n) ? numberFormat.format(n) : '—');
  const rate = (n) => (typeof n === 'number' && Number.isFinite(n) ? rateFormat.format(n) : '—');

  /** 42 s, 3 m 05 s, 1 h 02 m. */
  function duration(seconds) {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
    if (seconds < 10) return `${rateFormat.format(seconds)} s`;
    if (seconds < 60) return `${Math.round(seconds)} s`;
    const s = Math.round(seconds);
    if (s < 3600) return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s`;
    return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} m`;
  }

  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
  const clock = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', second: '2-digit' });
  const when = (ms) => (typeof ms === 'number' ? dateFormat.format(new Date(ms)) : '—');

  function countdown(ms) {
    const total = Math.max(0, Math.round(ms / 1000));
    const h = Math.floor(total / 3600);
    const m = Math.floor((total % 3600) / 60);
    const s = total % 60;
    return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}` : `${m}:${String(s).padStart(2, '0')}`;
  }

  // --- state ---

  let queueName = null;
  let controls = null;
  let lastOk = 0;
  let pollTimer = null;
  let generation = 0; // bumps on a queue switch: answers for the previous queue are dropped
  const timeline = { t: [], waiting: [], admitted: [], limit: [], active: [], claimed: [], maxActive: [], p50: [], p90: [], max: [] };

  // --- charts ---

  const AXIS = {
    stroke: '#687082',
    grid: { stroke: '#eef0f4', width: 1 },
    ticks: { stroke: '#e1e4ea', width: 1, size: 4 },
    font: '11px system-ui, sans-serif',
  };
  const CHARTS = [
    {
      id: 'waiting',
      series: [{ key: 'waiting', label: 'waiting', color: '#2563eb', fill: 'rgba(37, 99, 235, 0.12)' }],
      format: count,
    },
    {
      id: 'admitted',
      series: [
        { key: 'admitted', label: 'admitted / s', color: '#059669', fill: 'rgba(5, 150, 105, 0.12)' },
        { key: 'limit', label: 'rate', color: '#94a3b8', dash: [6, 4] },
      ],
      format: rate,
    },
    {
      id: 'active',
      series: [
        { key: 'active', label: 'active', color: '#d97706', fill: 'rgba(217, 119, 6, 0.12)' },
        { key: 'claimed', label: 'claimed', color: '#7c3aed' },
        { key: 'maxActive', label: 'maxActive', color: '#dc2626', dash: [6, 4] },
      ],
      format: count,
    },
    {
      id: 'wait',
      series: [
        { key: 'p50', label: 'p50', color: '#0891b2' },
        { key: 'p90', label: 'p90', color: '#4f46e5' },
        { key: 'max', label: 'max', color: '#e11d48', dash: [2, 3] },
      ],
      format: duration,
    },
  ];

  function makeLegend(chart) {
    const list = $(`legend-${chart.id}`);
    chart.values = chart.series.map((s) => {
      const item = document.createElement('li');
      const swatch = document.createElement('span');
      swatch.className = s.dash ? 'swatch dashed' : 'swatch';
      if (s.dash) swatch.style.borderColor = s.color;
      else swatch.style.background = s.color;
      const value = document.createElement('span');
      value.className = 'value';
      value.textContent = '—';
      item.append(swatch, document.createTextNode(s.label), value);
      list.append(item);
      return value;
    });
  }

  function makeChart(chart) {
    const el = $(`chart-${chart.id}`);
    makeLegend(chart);
    // Axis ticks keep their fraction (2.5 s, 0.5 / s): the rounding of the figures would repeat labels.
    const tick = chart.format === duration ? (v) => (v < 60 ? `${rateFormat.format(v)} s` : duration(v)) : chart.format === rate ? rate : count;
    const yValues = (_u, ticks) => ticks.map(tick);
    chart.plot = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height: el.clientHeight || 200,
        padding: [10, 12, 0, 0],
        legend: { show: false },
        cursor: { drag: { x: false, y: false, setScale: false }, points: { size: 6 } },
        scales: {
          x: { time: true },
          y: { range: (_u, _min, max) => [0, niceMax(max)] },
        },
        axes: [
          { ...AXIS, space: 80, size: 32, values: (_u, ticks) => ticks.map((t) => clock.format(new Date(t * 1000))) },
          { ...AXIS, size: 56, values: yValues },
        ],
        series: [
          {},
          ...chart.series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: 2,
            ...(s.fill ? { fill: s.fill } : {}),
            ...(s.dash ? { dash: s.dash } : {}),
            points: { show: false },
            spanGaps: false,
          })),
        ],
      },
      chartData(chart),
      el,
    );
    new ResizeObserver(() => chart.plot.setSize({ width: Math.max(200, el.clientWidth), height: el.clientHeight || 200 })).observe(el);
  }

  /** A round top for the y axis, never below 1, so a flat zero line stays at the bottom. */
  function niceMax(max) {
    const m = typeof max === 'number' && Number.isFinite(max) && max > 0 ? max * 1.15 : 1;
    const step = 10 ** Math.floor(Math.log10(m));
    const top = [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].map((f) => f * step).find((v) => v >= m);
    return Math.max(1, top);
  }

  const chartData = (chart) => [timeline.t, ...chart.series.map((s) => timeline[s.key])];

  function drawCharts() {
    for (const chart of CHARTS) {
      chart.plot.setData(chartData(chart));
      chart.series.forEach((s, i) => {
        const values = timeline[s.key];
        chart.values[i].textContent = chart.format(values[values.length - 1]);
      });
      $(`chart-${chart.id}`).dataset.points = String(timeline.t.length);
    }
  }

  function record(stats, limits) {
    const wait = stats && stats.waitSeconds;
    const point = {
      t: Date.now() / 1000,
      waiting: stats ? stats.waiting : null,
      admitted: stats ? stats.admittedPerSecond : null,
      limit: limits ? limits.admitRatePerSecond : null,
      active: stats ? stats.active : null,
      claimed: stats ? stats.claimed : null,
      maxActive: limits && typeof limits.maxActive === 'number' ? limits.maxActive : null,
      // Nobody admitted in the last 10 minutes: no wait to draw (the store reports zeros).
      p50: wait && wait.count > 0 ? wait.p50 : null,
      p90: wait && wait.count > 0 ? wait.p90 : null,
      max: wait && wait.count > 0 ? wait.max : null,
    };
    for (const key of Object.keys(timeline)) {
      timeline[key].push(point[key]);
      if (timeline[key].length > HISTORY_POINTS) timeline[key].shift();
    }
    drawCharts();
  }

  function clearHistory() {
    for (const key of Object.keys(timeline)) timeline[key].length = 0;
  }

  // --- figures and controls ---

  function setText(id, text) {
    const el = $(id);
    if (el.textContent !== text) el.textContent = text;
  }

  function showStats(stats) {
    setText('kpi-waiting', count(stats.waiting));
    // Invite-code lanes (SPEC §17): each lane's members waiting, share and code uses left.
    const lanes = stats.lanes || [];
    setText(
      'kpi-lanes',
      lanes
        .map((l) => `${l.name} ${count(l.waiting)} (${Math.round(l.share * 100)} %${l.codeUsesLeft === null ? '' : `, ${count(l.codeUsesLeft)} code uses left`})`)
        .join(' · '),
    );
    setText('kpi-rate', rate(stats.admittedPerSecond));
    setText('kpi-claimed', count(stats.claimed));
    const cap = controls && typeof controls.maxActive === 'number' ? controls.maxActive : null;
    setText('kpi-active', cap === null ? count(stats.active) : `${count(stats.active)} / ${count(cap)}`);
    setText('kpi-active-note', controls ? (cap === null ? 'no cap' : `${Math.round((100 * stats.active) / cap)} % of maxActive`) : '');
    setText('kpi-rate-note', controls ? `limit ${rate(controls.admitRatePerSecond)} / s, burst ${count(controls.admitBurst)}` : '');
    const wait = stats.waitSeconds;
    const waited = wait && wait.count > 0;
    setText('kpi-p50', waited ? duration(wait.p50) : '—');
    setText('kpi-p90', waited ? duration(wait.p90) : '—');
    setText('kpi-wait-note', waited ? `max ${duration(wait.max)}, ${count(wait.count)} admitted` : wait ? 'nobody admitted in 10 min' : '');
    const totals = stats.totals || {};
    for (const key of ['entered', 'admitted', 'consumed', 'expired', 'abandoned']) setText(`total-${key}`, count(totals[key]));
  }

  const MODE_TEXT = { open: 'Open', paused: 'Paused', passthrough: 'Passthrough', closed: 'Closed' };

  function showControls(c) {
    controls = c;
    const note = $('controls-note');
    note.hidden = c !== null;
    if (c === null) note.textContent = "This queue's store keeps no runtime controls.";
    for (const button of document.querySelectorAll('[data-action]')) {
      button.disabled = c === null || c.mode === button.dataset.action;
      button.setAttribute('aria-pressed', String(c !== null && c.mode === button.dataset.action));
    }
    const badge = $('mode-badge');
    badge.dataset.mode = c ? c.mode : '';
    setText('mode-badge', c ? MODE_TEXT[c.mode] || c.mode : '—');
    setText('mode-message', c && c.message ? c.message : '');
    showOpening();
    if (!c) return;
    setText('controls-version', `version ${c.version}`);
    setText('c-mode', MODE_TEXT[c.mode] || c.mode);
    setText('c-message', c.message === null ? 'none' : c.message);
    setText('c-rate', `${rate(c.admitRatePerSecond)} / s`);
    setText('c-burst', count(c.admitBurst));
    setText('c-max-active', c.maxActive === null ? 'no cap' : count(c.maxActive));
    setText('c-opens-at', c.opensAt === null ? 'not scheduled' : when(c.opensAt));
    setText('c-shuffle', c.shuffle ? 'yes, places drawn at the opening' : 'no');
    setText('c-commitment', c.drawCommitment || '—');
    const cohort = c.cohortCommitment;
    setText('c-cohort', cohort ? cohort.head + ' (' + cohort.length + ' entries)' : c.drawCommitment ? 'frozen at the opening' : '—');
    setText('c-seed', c.drawSeed || (c.drawCommitment ? 'published at the opening' : '—'));
    setText('c-safety-net', c.safetyNet ? 'on: instant entry while nobody waits' : 'off');
    setText('c-stock', c.stock === null || c.stock === undefined ? 'not set' : `${count(c.stock)} left`);
    fillForms(c);
  }

  /** The audit trail: newest first, who changed what. */
  function showLog(entries) {
    const items = entries.map((e) => {
      const li = document.createElement('li');
      const what = JSON.stringify(e.patch) + (e.drawCommitment ? ` · draw commitment ${e.drawCommitment.slice(0, 16)}…` : '');
      li.textContent = `${when(e.at)} · v${e.version} · ${e.actor === null ? 'no actor' : e.actor} · ${what}`;
      return li;
    });
    $('controls-log').replaceChildren(...items);
  }

  function showOpening() {
    const c = controls;
    const ahead = c && c.opensAt !== null ? c.opensAt - Date.now() : 0;
    setText('mode-opening', ahead > 0 ? `Opens in ${countdown(ahead)}, at ${when(c.opensAt)}${c.shuffle ? ' · places drawn at random' : ''}` : '');
  }

  // The forms show the controls in force until the operator starts editing one.
  let editing = null;
  let shown = { rate: '', burst: '', cap: '', stock: '' };
  function fillForms(c) {
    if (editing !== 'rate') {
      $('in-rate').value = String(c.admitRatePerSecond);
      $('in-burst').value = String(c.admitBurst);
      $('in-max-active').value = c.maxActive === null ? '' : String(c.maxActive);
      // What the form shows as in force: only fields the operator changed from these are sent
      // (the rate in force moves by itself under adaptive admission; sending it would pin it).
      shown = { ...shown, rate: $('in-rate').value, burst: $('in-burst').value, cap: $('in-max-active').value };
    }
    if (editing !== 'protection') {
      $('in-stock').value = c.stock === null || c.stock === undefined ? '' : String(c.stock);
      $('in-safety-net').checked = c.safetyNet;
      shown.stock = $('in-stock').value;
    }
    if (editing !== 'schedule') {
      $('in-opens-at').value = c.opensAt === null ? '' : localInputValue(c.opensAt);
      $('in-shuffle').checked = c.shuffle;
    }
  }
  for (const [form, name] of [
    ['form-rate', 'rate'],
    ['form-schedule', 'schedule'],
    ['form-protection', 'protection'],
  ]) {
    $(form).addEventListener('input', () => (editing = name));
  }

  /** Epoch ms as the value of a datetime-local input (the browser's time zone). */
  function localInputValue(ms) {
    const d = new Date(ms);
    const pad = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function setStatus(state, text) {
    const status = $('status');
    status.dataset.state = state;
    setText('status-text', text);
  }

  // --- polling ---

  async function poll() {
    const mine = generation;
    const name = queueName;
    let answer = null;
    let problem = null;
    try {
      const res = await fetch(api(`api/queues/${encodeURIComponent(name)}`), { headers: { accept: 'application/json' }, cache: 'no-store' });
      const body = await res.json().catch(() => null);
      if (res.ok && body) answer = body;
      else if (res.status === 403) problem = 'Not authorized: sign in again';
      else if (body && body.error && body.error.code === 'STORE_UNAVAILABLE') problem = 'Store unavailable';
      else problem = (body && body.error && body.error.message) || `HTTP ${res.status}`;
    } catch {
      problem = 'Server unreachable';
    }
    if (mine !== generation) return;
    if (answer) {
      lastOk = Date.now();
      showControls(answer.controls);
      showLog(answer.log || []);
      showStats(answer.stats);
      record(answer.stats, answer.controls);
      setStatus('live', `Live · ${new Date(lastOk).toLocaleTimeString()}`);
    } else {
      record(null, null); // a gap in the charts
      setStatus(Date.now() - lastOk < STALE_MS ? 'stale' : 'error', problem);
    }
    pollTimer = setTimeout(poll, POLL_MS);
  }

  function switchQueue(name) {
    if (name === queueName) return;
    queueName = name;
    generation++;
    clearTimeout(pollTimer);
    clearHistory();
    controls = null;
    editing = null;
    drawCharts();
    window.history.replaceState(null, '', `#queue=${encodeURIComponent(name)}`);
    void poll();
  }

  async function start() {
    for (const chart of CHARTS) makeChart(chart);
    setInterval(showOpening, 1000);
    if (readOnly) {
      $('actions').hidden = true;
      $('read-only-note').hidden = false;
    }
    let list;
    try {
      const res = await fetch(api('api/queues'), { headers: { accept: 'application/json' }, cache: 'no-store' });
      if (!res.ok) throw new Error(res.status === 403 ? 'Not authorized' : `HTTP ${res.status}`);
      list = await res.json();
    } catch (error) {
      setStatus('error', error.message || 'Server unreachable');
      setTimeout(start, 3000);
      return;
    }
    const select = $('queue-select');
    select.replaceChildren(
      ...list.queues.map((q) => {
        const option = document.createElement('option');
        option.value = q.name;
        option.textContent = q.name;
        return option;
      }),
    );
    select.disabled = list.queues.length < 2;
    select.addEventListener('change', () => switchQueue(select.value));
    const wanted = new URLSearchParams(location.hash.slice(1)).get('queue');
    const first = list.queues.some((q) => q.name === wanted) ? wanted : list.queues[0].name;
    select.value = first;
    switchQueue(first);
  }

  // --- changes, each through the confirmation dialog ---

  const dialog = $('confirm');
  let pending = null; // { patch(): object, what }

  function confirmChange({ what, patch, withMessage = false, clearMessage = false }) {
    if (!controls) return;
    pending = { patch, withMessage, clearMessage };
    setText('confirm-title', `Apply to queue “${queueName}”?`);
    setText('confirm-what', what);
    $('confirm-message-row').hidden = !withMessage;
    $('confirm-message').value = withMessage && controls.message ? controls.message : '';
    $('confirm-clear-row').hidden = !(clearMessage && controls.message);
    $('confirm-clear').checked = true;
    setText('confirm-error', '');
    $('confirm-apply').disabled = false;
    showPatch();
    dialog.showModal();
    (withMessage ? $('confirm-message') : $('confirm-apply')).focus();
  }

  /** The patch the dialog will send, with its extra fields applied. */
  function currentPatch() {
    const patch = { ...pending.patch };
    if (pending.withMessage) {
      const message = $('confirm-message').value.trim();
      if (message !== '' && message !== controls.message) patch.message = message;
    }
    if (pending.clearMessage && controls.message && $('confirm-clear').checked) patch.message = null;
    return patch;
  }

  function showPatch() {
    setText('confirm-patch', JSON.stringify(currentPatch(), null, 2));
  }
  $('confirm-message').addEventListener('input', showPatch);
  $('confirm-clear').addEventListener('change', showPatch);
  $('confirm-cancel').addEventListener('click', () => dialog.close());

  $('confirm-apply').addEventListener('click', async () => {
    const patch = currentPatch();
    const apply = $('confirm-apply');
    apply.disabled = true;
    setText('confirm-error', '');
    try {
      const res = await fetch(api('api/controls'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ queue: queueName, patch }),
        cache: 'no-store',
      });
      const body = await res.json().catch(() => null);
      if (!res.ok) throw new Error((body && body.error && body.error.message) || `HTTP ${res.status}`);
      dialog.close();
      editing = null;
      showControls(body.controls);
      toast(`Applied to “${body.queue}”: controls version ${body.controls.version}.`);
    } catch (error) {
      setText('confirm-error', error.message || 'The change failed.');
      apply.disabled = false;
    }
  });

  let toastTimer = null;
  function toast(text, kind = 'info') {
    const el = $('toast');
    el.textContent = text;
    el.dataset.kind = kind;
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (el.hidden = true), 4000);
  }

  const ACTIONS = {
    open: { what: 'Resume: members are admitted again at the configured rate, in the same order.', clearMessage: true },
    paused: { what: 'Pause: nobody is admitted; waiting members keep their places and see the message.', withMessage: true },
    passthrough: { what: 'Passthrough: everyone is let through at once, ignoring the rate and maxActive.', clearMessage: true },
    closed: { what: 'Close: no new member can enter; waiting members keep their places, nobody is admitted.', withMessage: true },
  };
  for (const button of document.querySelectorAll('[data-action]')) {
    button.addEventListener('click', () => {
      const mode = button.dataset.action;
      confirmChange({ ...ACTIONS[mode], patch: { mode } });
    });
  }

  function formError(text) {
    setText('form-error', text);
  }

  $('form-rate').addEventListener('submit', (event) => {
    event.preventDefault();
    formError('');
    const patch = {};
    const rateValue = Number($('in-rate').value);
    const burst = Number($('in-burst').value);
    const capText = $('in-max-active').value.trim();
    const cap = capText === '' ? null : Number(capText);
    if (!(rateValue > 0)) return formError('The rate must be a number above 0.');
    if (!Number.isInteger(burst) || burst < 1) return formError('The burst must be a whole number of at least 1.');
    if (cap !== null && (!Number.isInteger(cap) || cap < 1)) return formError('Max active must be a whole number of at least 1, or empty for no cap.');
    if ($('in-rate').value !== shown.rate) patch.admitRatePerSecond = rateValue;
    if ($('in-burst').value !== shown.burst) patch.admitBurst = burst;
    if ($('in-max-active').value !== shown.cap) patch.maxActive = cap;
    if (Object.keys(patch).length === 0) return formError('Nothing to change: these are the values in force.');
    confirmChange({ what: 'Change the admission rate and capacity.', patch });
  });

  $('form-message').addEventListener('submit', (event) => {
    event.preventDefault();
    formError('');
    const message = $('in-message').value.trim();
    if (message === '') return formError('Write a message first (or clear the one in force).');
    if (message === controls.message) return formError('This message is already in force.');
    confirmChange({ what: 'Show this message to waiting members.', patch: { message } });
  });
  $('clear-message').addEventListener('click', () => {
    formError('');
    if (!controls || controls.message === null) return formError('No message is in force.');
    confirmChange({ what: 'Remove the message shown to waiting members.', patch: { message: null } });
  });

  $('form-protection').addEventListener('submit', (event) => {
    event.preventDefault();
    formError('');
    const text = $('in-stock').value.trim();
    const stock = text === '' ? null : Number(text);
    if (stock !== null && (!Number.isInteger(stock) || stock < 0)) return formError('The stock must be a whole number of at least 0, or empty for no stock.');
    const patch = {};
    if ($('in-stock').value !== shown.stock) patch.stock = stock;
    if ($('in-safety-net').checked !== controls.safetyNet) patch.safetyNet = $('in-safety-net').checked;
    if (Object.keys(patch).length === 0) return formError('Nothing to change: these are the values in force.');
    const what = [
      'stock' in patch
        ? stock === null
          ? 'Remove the stock: the queue no longer closes by itself.'
          : `Set the stock left to ${count(stock)}: at 0 the queue closes by itself.`
        : null,
      'safetyNet' in patch
        ? patch.safetyNet
          ? 'Turn the safety net on: members enter at once while nobody waits and the rate allows.'
          : 'Turn the safety net off: every member waits for an admission step.'
        : null,
    ];
    confirmChange({ what: what.filter(Boolean).join(' '), patch });
  });

  $('form-schedule').addEventListener('submit', (event) => {
    event.preventDefault();
    formError('');
    const value = $('in-opens-at').value;
    const opensAt = value === '' ? NaN : new Date(value).getTime();
    if (!Number.isFinite(opensAt)) return formError('Pick the date and time of the opening.');
    if (opensAt <= Date.now()) return formError('The opening must be in the future.');
    const patch = {};
    if (opensAt !== controls.opensAt) patch.opensAt = opensAt;
    if ($('in-shuffle').checked !== controls.shuffle) patch.shuffle = $('in-shuffle').checked;
    if (Object.keys(patch).length === 0) return formError('Nothing to change: this opening is in force.');
    confirmChange({ what: `Schedule the opening for ${when(opensAt)}: until then members join a pre-queue and nobody is admitted.`, patch });
  });
  $('open-now').addEventListener('click', () => {
    formError('');
    if (!controls || controls.opensAt === null) return formError('No opening is scheduled.');
    confirmChange({ what: 'Drop the schedule: the queue opens now.', patch: { opensAt: null } });
  });

  void start();
})();
