// Module resolution hook used only in a checkout of the repository (see deerflow.js): adds the
// "deerflow-source" export condition, under which the workspace packages export their TypeScript sources.
/** @type {import("node:module").ResolveHook} */
export async function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier, { ...context, conditions: [...context.conditions, "deerflow-source"] });
}
