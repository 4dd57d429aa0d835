// @ts-check
// The capture list of `vor serve` and the small picker shown in the toolbar.
// GET /api/captures -> {"captures":[{"id":"0","name":"run.vor","bytes":N,"ws":"/capture/0"}]}

/** @typedef {{id: string, name: string, bytes: number, ws: string}} Capture */
/** @typedef {{captures: Capture[], reason?: undefined} | {captures: null, reason: string}} CaptureList */

/**
 * Fetches and validates the list. Resolves to {captures} or {captures: null, reason}.
 * @param {string} [url] @param {typeof fetch} [fetchImpl]
 * @returns {Promise<CaptureList>}
 */
export async function fetchCaptureList(url = '/api/captures', fetchImpl = globalThis.fetch) {
  let res;
  try {
    res = await fetchImpl(url, { cache: 'no-store' });
  } catch (err) {
    return { captures: null, reason: `cannot reach ${url} (${err.message})` };
  }
  if (!res.ok) return { captures: null, reason: `${url} answered HTTP ${res.status}` };
  let body;
  try { body = await res.json(); } catch { return { captures: null, reason: `${url} did not return JSON` }; }
  return parseCaptureList(body);
}

/**
 * Validates a capture list body; keeps entries with an id and a ws path.
 * @param {any} body  parsed JSON
 * @returns {CaptureList}
 */
export function parseCaptureList(body) {
  if (!body || !Array.isArray(body.captures)) return { captures: null, reason: 'capture list without a "captures" array' };
  const captures = body.captures
    .filter((/** @type {any} */ c) => c && c.id !== undefined && typeof c.ws === 'string')
    .map((/** @type {any} */ c) => ({ id: String(c.id), name: String(c.name ?? `capture ${c.id}`), bytes: Number(c.bytes) || 0, ws: c.ws }));
  return { captures };
}

/**
 * The capture to open: the one named by ?capture=<id> if listed, else the first.
 * @param {Capture[] | null} captures @param {string | null | undefined} requestedId
 */
export function chooseCapture(captures, requestedId) {
  if (!captures || captures.length === 0) return null;
  if (requestedId != null) {
    const c = captures.find((x) => x.id === String(requestedId));
    if (c) return c;
  }
  return captures[0];
}

/** @param {number} n */
export function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/**
 * A <select> listing the captures; onChoose(capture) when the user picks another.
 * @param {Document} doc @param {Capture[]} captures @param {string} selectedId @param {(c: Capture) => void} onChoose
 */
export function createCapturePicker(doc, captures, selectedId, onChoose) {
  const select = doc.createElement('select');
  select.className = 'vor-capture-picker';
  select.title = 'Captures served by vor serve';
  for (const c of captures) {
    const o = doc.createElement('option');
    o.value = c.id;
    o.textContent = `${c.name} (${formatBytes(c.bytes)})`;
    if (c.id === selectedId) o.selected = true;
    select.append(o);
  }
  select.addEventListener('change', () => {
    const c = captures.find((x) => x.id === select.value);
    if (c) onChoose(c);
  });
  return select;
}
