// Types of the Node entry (index.node.js): everything in api.d.ts, plus
// FileStore, which only the Node entry exports. The browser and init
// entries have their own declarations without it (package.json "exports"
// picks the file by condition: `node` here, `browser`/`default` there).
import type { Store } from './api.js';

export * from './api.js';

/**
 * Node only: snapshot.json + journal-<gen>.jsonl in `dir`, fsynced. One
 * process at a time: `load()` takes the directory's lock file (`lock`,
 * holding the pid; stale once that process is gone) or throws ChimeError
 * `store_locked`; `close()` releases it.
 */
export class FileStore implements Store {
  constructor(dir: string);
  readonly dir: string;
  load(): { snapshot: string | null; journal: string };
  append(lines: string[]): void;
  compact(snapshot: string): void;
  close(): void;
}
