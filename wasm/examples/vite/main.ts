// Vite emits the .wasm that the package's browser entry names with
// `new URL('./pkg/chime_wasm_bg.wasm', import.meta.url)`: a plain import.
import { Spec } from 'chime-scheduler';

const spec = new Spec('*/30 0-2 * * *', { tz: 'Europe/London' });
document.body.dataset.next = String(spec.next(Date.UTC(2026, 9, 25)));
