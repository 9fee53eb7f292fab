// domino's bundled declarations name the module "domino", not its published name; only createDocument is used here.
declare module "@mixmark-io/domino" {
  /** Parses `html` into a document (`force`: a full document even for a fragment). */
  function createDocument(html?: string, force?: boolean): Document;
  const domino: { createDocument: typeof createDocument };
  export default domino;
}
