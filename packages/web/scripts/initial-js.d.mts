/** One built chunk and its gzip size. */
export interface ChunkSize {
  file: string;
  gzipBytes: number;
}
/** The initial-JS budget, in KiB of gzip. */
export declare const INITIAL_JS_BUDGET_KB: number;
/** Measure a built `dist`: the chunks index.html loads eagerly (and their static imports) and the lazy rest. */
export declare function measureBundle(dist: string): { initial: ChunkSize[]; lazy: ChunkSize[]; initialBytes: number; lazyBytes: number };
