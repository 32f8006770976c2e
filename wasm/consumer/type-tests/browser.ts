// Compile-time checks of the browser typings (moduleResolution bundler
// picks the `default`/`browser` condition of package.json "exports").
import { Engine, preview } from 'chime-scheduler';
// @ts-expect-error FileStore is Node only: the browser entry does not export it
import { FileStore } from 'chime-scheduler';
import { init } from 'chime-scheduler/init';
import wasm from 'chime-scheduler/chime.wasm';

await init({ wasm });
await init({ wasm: new Uint8Array(8) });
// @ts-expect-error init takes `{ wasm }`
await init(wasm);
console.log(new Engine().pollTimeout(), preview('@every 1h').length, FileStore);
