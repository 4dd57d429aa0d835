// @ts-check
// File source: a .vor file dropped on the page or chosen with a file input, read in chunks
// (1 MiB by default) and fed to the same CaptureDecoder as the websocket stream. Reading yields to
// the event loop between chunks so the panel keeps drawing while a large capture loads. A read that
// is aborted (another file was opened) stops at its next await and touches neither the decoder, nor
// the panel, nor the status again. A file that ends before its end record (per decoder.finished())
// is reported: a warning when frames were read (truncated, or still being written), an error when
// none were; an empty file is an error.

import { feedDecoder } from './decoder.js';
import { plural } from '../text.js';

export const FILE_CHUNK_BYTES = 1 << 20;

/**
 * Reads `file` (a Blob) into decoder -> sink. Resolves to {bytes, frames, rejected, error, truncated,
 * aborted}: `truncated` when the file ends before the capture's end record (frames were read, it is
 * only a warning), `aborted` when `signal` (AbortSignal) stopped the read: then nothing more reached
 * the decoder or the sink after the abort, and no status was set for it.
 * @param {Blob & {name?: string}} file
 * @param {import('./decoder.js').CaptureDecoder | null} decoder
 * @param {import('./decoder.js').CaptureSink} sink
 * @param {{chunkBytes?: number, signal?: AbortSignal | null, onProgress?: (bytes: number, total: number) => void}} [options]
 */
export async function readCaptureFile(file, decoder, sink, { chunkBytes = FILE_CHUNK_BYTES, signal = null, onProgress = () => {} } = {}) {
  const name = file.name || 'dropped file';
  /** @type {{bytes: number, frames: number, rejected: number, error: string | null, truncated: boolean, aborted: boolean}} */
  const out = { bytes: 0, frames: 0, rejected: 0, error: null, truncated: false, aborted: false };
  // checked after every await: the decoder and the sink may belong to a newer read by then
  const stopped = () => (signal && signal.aborted ? (out.aborted = true) : false);
  if (stopped()) return out;
  if (!decoder) {
    out.error = 'no capture decoder';
    sink.setStatus?.(`${name}: cannot decode .vor bytes without a capture decoder`, 'error');
    return out;
  }
  decoder.reset();
  sink.clear?.();
  sink.setStatus?.(`${name}: reading…`, 'info');
  for (let off = 0; off < file.size; off += chunkBytes) {
    let buf;
    try {
      buf = await file.slice(off, Math.min(file.size, off + chunkBytes)).arrayBuffer();
    } catch (err) {
      if (stopped()) return out;
      out.error = `read failed: ${err.message}`;
      break;
    }
    if (stopped()) return out;
    out.bytes += buf.byteLength;
    const r = feedDecoder(decoder, new Uint8Array(buf), sink);
    out.frames += r.frames;
    out.rejected += r.rejected;
    onProgress(out.bytes, file.size);
    if (r.error) { out.error = `capture unreadable: ${r.error}`; break; }
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (stopped()) return out;
  }
  const frames = plural(out.frames, 'frame');
  if (!out.error && file.size === 0) out.error = 'empty file, not a .vor capture';
  // a decoder without finished() cannot tell a complete capture from a cut one
  if (!out.error && typeof decoder.finished === 'function' && !decoder.finished()) {
    if (out.frames === 0) out.error = 'ends before its first frame: not a complete capture';
    else out.truncated = true;
  }
  if (out.error) sink.setStatus?.(`${name}: ${out.error}`, 'error');
  else if (out.truncated) sink.setStatus?.(`${name}: ${frames} · ends before its end record: truncated or still being written`, 'warn');
  else sink.setStatus?.(`${name}: ${frames}`, 'info');
  return out;
}

/**
 * Makes `target` accept dropped files; onFile(file) for the first file. Returns detach().
 * @param {HTMLElement} target @param {(file: File) => void} onFile @param {{hoverClassTarget?: HTMLElement}} [options]
 */
export function attachFileDrop(target, onFile, { hoverClassTarget = target } = {}) {
  let depth = 0;
  /** @param {DragEvent} e @returns {e is DragEvent & {dataTransfer: DataTransfer}} */
  const hasFiles = (e) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
  /** @param {DragEvent} e */
  const enter = (e) => { if (!hasFiles(e)) return; e.preventDefault(); depth++; hoverClassTarget.classList.add('vor-dragover'); };
  /** @param {DragEvent} e */
  const over = (e) => { if (!hasFiles(e)) return; e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; };
  const leave = () => { depth = Math.max(0, depth - 1); if (depth === 0) hoverClassTarget.classList.remove('vor-dragover'); };
  /** @param {DragEvent} e */
  const drop = (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth = 0;
    hoverClassTarget.classList.remove('vor-dragover');
    const f = e.dataTransfer.files[0];
    if (f) onFile(f);
  };
  target.addEventListener('dragenter', enter);
  target.addEventListener('dragover', over);
  target.addEventListener('dragleave', leave);
  target.addEventListener('drop', drop);
  return () => {
    target.removeEventListener('dragenter', enter);
    target.removeEventListener('dragover', over);
    target.removeEventListener('dragleave', leave);
    target.removeEventListener('drop', drop);
  };
}

/**
 * An "Open .vor…" button backed by a hidden file input; onFile(file) when one is chosen.
 * @param {Document} doc @param {(file: File) => void} onFile
 */
export function createFileButton(doc, onFile) {
  const label = doc.createElement('label');
  label.className = 'vor-file';
  label.title = 'Open a .vor capture (or drop one on the page)';
  const input = doc.createElement('input');
  input.type = 'file';
  input.accept = '.vor';
  input.hidden = true;
  input.addEventListener('change', () => { const f = input.files?.[0]; if (f) onFile(f); input.value = ''; });
  label.append('Open .vor…', input);
  return label;
}
