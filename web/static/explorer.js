// The static explorer's link to its worker (worker.js, over the WebAssembly module): loaded
// before the explorer's own script, it answers the page's requests to api/v1/ in this browser,
// with the bodies `kalah serve` would send, and draws the search's budget and a stop button
// at the top of the page. Any other request goes to the network as before.
'use strict';
(() => {
  const BUDGETS = [1, 5, 15, 60]; // seconds a position, as `kalah serve --budget` (at most 60)
  const KEY = 'kalah-explorer-budget';
  const stored = (() => { try { return Number(localStorage.getItem(KEY)); } catch (_) { return 0; } })();
  let budget = BUDGETS.includes(stored) ? stored : 5;

  let worker = null;
  let nextId = 0;
  const pending = new Map(); // id -> { resolve, since }
  let ticker = null;

  function startWorker() {
    worker = new Worker('worker.js');
    worker.onmessage = (e) => {
      const job = pending.get(e.data.id);
      if (!job) return;
      pending.delete(e.data.id);
      job.resolve(e.data.reply);
      // A module that failed may be left in any state: the next question gets a fresh one.
      if (e.data.reply.failed) restart();
      drawState();
    };
    worker.onerror = (e) => {
      e.preventDefault();
      finishAll(500, { error: 'the page\'s worker failed: ' + (e.message || 'unknown error') });
      restart();
    };
  }

  function restart() {
    if (worker) worker.terminate();
    startWorker();
  }

  // Answers every question still open with `status` and `body`.
  function finishAll(status, body) {
    for (const job of pending.values()) job.resolve({ status, body });
    pending.clear();
    drawState();
  }

  function ask(request, signal) {
    return new Promise((resolve, reject) => {
      const id = ++nextId;
      const since = performance.now();
      pending.set(id, { resolve, since });
      if (signal) {
        signal.addEventListener('abort', () => {
          if (!pending.has(id)) return;
          // The page moved on: the worker's search is for nothing, so it ends with it.
          pending.delete(id);
          restart();
          finishAll(409, { error: 'superseded', reason: 'stopped' });
          reject(new DOMException('superseded by another question', 'AbortError'));
        });
      }
      worker.postMessage({ id, request, budgetMs: budget * 1000 });
      drawState();
    });
  }

  const realFetch = window.fetch.bind(window);
  window.fetch = async (url, options) => {
    const text = String(url);
    if (!text.startsWith('api/v1/')) return realFetch(url, options);
    const signal = options && options.signal;
    if (signal && signal.aborted) throw new DOMException('aborted', 'AbortError');
    const reply = await ask(text, signal);
    return new Response(JSON.stringify(reply.body), {
      status: reply.status,
      headers: { 'Content-Type': 'application/json' },
    });
  };

  // The bar: the budget, what is being searched and for how long, and the stop button.
  function drawState() {
    const state = document.getElementById('search-state');
    const stop = document.getElementById('search-stop');
    if (!state || !stop) return;
    const first = Math.min(...Array.from(pending.values(), (j) => j.since));
    const busy = pending.size > 0;
    stop.hidden = !busy;
    document.body.dataset.search = busy ? 'running' : 'idle';
    state.textContent = busy
      ? 'searching in this page… ' + ((performance.now() - first) / 1000).toFixed(1) + ' s'
      : '';
    if (busy && !ticker) ticker = setInterval(drawState, 100);
    if (!busy && ticker) { clearInterval(ticker); ticker = null; }
  }

  function drawBar() {
    const bar = document.createElement('p');
    bar.id = 'search-bar';
    bar.className = 'muted note';
    const label = document.createElement('label');
    label.append('Search budget ');
    const select = document.createElement('select');
    select.id = 'search-budget';
    for (const s of BUDGETS) {
      const o = document.createElement('option');
      o.value = String(s);
      o.textContent = s + ' s';
      o.selected = s === budget;
      select.append(o);
    }
    label.append(select, ' a position, in this browser (no server)');
    const state = document.createElement('span');
    state.id = 'search-state';
    state.setAttribute('aria-live', 'polite');
    const stop = document.createElement('button');
    stop.id = 'search-stop';
    stop.type = 'button';
    stop.className = 'plain';
    stop.textContent = 'Stop';
    stop.hidden = true;
    bar.append(label, ' ', state, ' ', stop);
    document.querySelector('header').append(bar);

    select.addEventListener('change', () => {
      budget = Number(select.value);
      try { localStorage.setItem(KEY, String(budget)); } catch (_) { /* private mode */ }
      // The page's own loader (a global of its script) answers again within the new budget.
      if (typeof window.load === 'function') window.load();
    });
    stop.addEventListener('click', () => {
      const secs = pending.size
        ? ((performance.now() - Math.min(...Array.from(pending.values(), (j) => j.since))) / 1000).toFixed(1)
        : '0';
      restart();
      finishAll(409, {
        error: 'stopped after ' + secs + ' s, before the search finished (choose a budget above and try again)',
        reason: 'stopped',
      });
    });
    // The page's first question was asked before the bar was there.
    drawState();
  }

  startWorker();
  document.addEventListener('DOMContentLoaded', drawBar);
})();
