// `import wasm from 'chime-scheduler/chime.wasm'`: the engine's .wasm file.
// Bundlers decide what the default export is: with esbuild's
// `--loader:.wasm=file` a URL string (what `init({ wasm })` takes), with
// `--loader:.wasm=binary` a Uint8Array.
declare const wasm: string;
export default wasm;
