// dependency-cruiser's rules for this repository (`bun run deps`; test/deps.test.ts runs it with
// the suite). Import circles are refused, type-only imports included: a module that imports its
// importer's types is a module whose types belong somewhere both can import (app-types.ts).
// The benches (scripts/bench) reach src/ only through the seams a user or a test reaches it by
// (docs/development.md): the index's public module, the two HTTP clients — the rest through the
// processes and CLIs they start, and test/support.
// TypeScript is parsed with swc: dependency-cruiser reads TypeScript through TypeScript's own
// compiler API (< 7), which this repository's TypeScript 7 does not have.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules that import each other, at run time or for types: move what both need into a module of its own.",
      from: {},
      to: { circular: true },
    },
    {
      name: "bench-public-seams",
      severity: "error",
      comment:
        "A bench imports src/ only through its public seams: src/router/index/index.ts (openIndexStore and what a caller needs around it), src/router/client.ts, src/orchestrator/client.ts; anything else through the real process, a CLI or test/support.",
      from: { path: "^scripts/bench/" },
      to: { path: "^src/", pathNot: "^src/(router/index/index|router/client|orchestrator/client)\\.ts$" },
    },
  ],
  options: {
    parser: "swc",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
  },
};
