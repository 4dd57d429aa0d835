// ESLint for the panel (web/, ES modules in the browser) and the Emscripten JS libraries (wasm/js/,
// scripts that emcc reads): eslint's recommended rules and a few more that catch real mistakes, no
// style rules (the code has one style already; types are tsc's job, tsconfig.json). Checked by
// ctest lint_eslint: `npx eslint web wasm/js`.

import js from '@eslint/js';
import globals from 'globals';

const rules = {
  ...js.configs.recommended.rules,
  'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', caughtErrors: 'none' }],
  'no-shadow': 'error',
  'no-var': 'error',
  'prefer-const': 'error',
  eqeqeq: ['error', 'always', { null: 'ignore' }],
  'no-implicit-coercion': ['error', { allow: ['!!', '+'] }],
  'no-throw-literal': 'error',
  'no-return-assign': ['error', 'except-parens'],
};

export default [
  {
    files: ['web/**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: globals.browser },
    rules,
  },
  {
    // Emscripten 3.1.6 library files: ES5-style scripts (var, function expressions) whose free names
    // are the glue's (declared for tsc in wasm/js/emscripten_library.d.ts).
    files: ['wasm/js/*.js'],
    languageOptions: {
      ecmaVersion: 2020,
      sourceType: 'script',
      globals: {
        ...globals.browser,
        LibraryManager: 'readonly', mergeInto: 'readonly', Module: 'readonly', HEAP32: 'readonly', HEAPU32: 'readonly',
        HEAPU8: 'readonly', HEAPF64: 'readonly', wasmTable: 'readonly', wasmModule: 'readonly', UTF8ToString: 'readonly',
        stringToUTF8: 'readonly', WorkerGlobalScope: 'readonly',
        VorDevtools: 'readonly', VorPanelBridge: 'readonly', VorFunctionNames: 'readonly', VorUpload: 'readonly',
        lengthBytesUTF8: 'readonly', stackSave: 'readonly', stackRestore: 'readonly', allocateUTF8OnStack: 'readonly',
        _vor_upload_start_js: 'readonly',
      },
    },
    rules: { ...rules, 'no-var': 'off', 'prefer-const': 'off' },
  },
];
