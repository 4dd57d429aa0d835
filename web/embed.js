// @ts-check
// Embedding entry point: what a page that hosts the panel (the wasm example page) imports.
//
//   import { mountPanel, createInPageSource } from './embed.js';
//   const panel = mountPanel(document.getElementById('profiler'), { budgetMs: 16.7 });
//   const source = createInPageSource(panel);
//   // from the wasm glue: source.pushDeclarations(json); source.pushFrame(u8);
//   followRefreshRate(panel, window);   // a page whose frame is one animation frame: budget = 1.5 refreshes

export { mountPanel, DEFAULT_BUDGET_MS } from './panel.js';
export { createInPageSource } from './sources/in_page.js';
export { connectCaptureStream, captureSocketUrl, CAPTURE_SUBPROTOCOL } from './sources/websocket.js';
export { readCaptureFile, attachFileDrop, createFileButton } from './sources/file.js';
export { loadCaptureDecoder, feedDecoder, isCaptureDecoder } from './sources/decoder.js';
export { parseFrameView, FrameViewError } from './frame_view.js';
export { startPanelPage } from './main.js';
export { followRefreshRate, budgetForRefresh } from './refresh_budget.js';
