// esbuild does not copy `new URL('./x.wasm', import.meta.url)` assets, so
// import the .wasm yourself (esbuild --loader:.wasm=file gives its URL)
// and hand it to `init` from the `chime-scheduler/init` entry.
import { init, Spec } from 'chime-scheduler/init';
import wasm from 'chime-scheduler/chime.wasm';

await init({ wasm });
const spec = new Spec('*/30 0-2 * * *', { tz: 'Europe/London' });
document.body.dataset.next = String(spec.next(Date.UTC(2026, 9, 25)));
