// The static explorer's worker: the WebAssembly module of kalah-web (kalah.wasm), asked one
// question at a time, so that a search never freezes the page. A message { id, request,
// budgetMs } (request: the API's path and query, "api/v1/start?houses=6&seeds=4") is answered
// by { id, reply } (reply: { status, body }, the HTTP API's status and JSON body). The page
// stops a search by ending this worker and starting another.
'use strict';

// The module's one import: the page's monotonic clock, for the search's deadline.
const imports = { kalah: { now_ms: () => performance.now() } };

const ready = (async () => {
  const res = await fetch('kalah.wasm');
  if (!res.ok) throw new Error('kalah.wasm could not be loaded (HTTP ' + res.status + ')');
  const { instance } = await WebAssembly.instantiate(await res.arrayBuffer(), imports);
  return instance.exports;
})();

const encoder = new TextEncoder();
const decoder = new TextDecoder();

onmessage = async (e) => {
  const { id, request, budgetMs } = e.data;
  let reply;
  try {
    const w = await ready;
    const bytes = encoder.encode(request);
    const at = w.kalah_request(bytes.length);
    new Uint8Array(w.memory.buffer, at, bytes.length).set(bytes);
    const len = w.kalah_answer(bytes.length, budgetMs);
    // The memory may have grown during the answer: its buffer is read afresh.
    reply = JSON.parse(decoder.decode(new Uint8Array(w.memory.buffer, w.kalah_reply(), len)));
  } catch (err) {
    reply = {
      status: 500,
      failed: true,
      body: { error: 'the page\'s WebAssembly module failed: ' + (err && err.message ? err.message : err) },
    };
  }
  postMessage({ id, reply });
};
