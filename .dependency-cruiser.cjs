// The layering of src/ (docs/architecture.md, "Layers and import rules"), checked by `npm run lint:deps` in CI.
// Imports point inward: surfaces → domain → db and platform; the composition (app.ts, compose.ts, main.ts)
// may import anything. Type-only imports count too: a type cycle is still a cycle to read.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment:
        "Modules import each other in a circle: move what both need into a module of its own (as dashboard/page-kit.ts).",
      from: {},
      to: { circular: true },
    },
    {
      name: "domain-not-to-surfaces",
      severity: "error",
      comment: "The domain serves every surface and knows none of them.",
      from: { path: "^src/domain/" },
      to: { path: "^src/surfaces/" },
    },
    {
      name: "platform-stays-below",
      severity: "error",
      comment:
        "platform/ is the plumbing (logging, metrics, outbound HTTP, fonts, exact JSON): it imports no business rule, database or surface.",
      from: { path: "^src/platform/" },
      to: { path: "^src/(domain|db|surfaces)/" },
    },
    {
      name: "db-stays-below",
      severity: "error",
      comment: "The database port and its adapters know nothing of the domain or the surfaces.",
      from: { path: "^src/db/" },
      to: { path: "^src/(domain|surfaces)/" },
    },
    {
      name: "client-knows-only-the-api",
      severity: "error",
      comment:
        "src/client is a client of the HTTP API: it knows the API's generated types and the platform's exact JSON, never the service's inside.",
      from: { path: "^src/client/" },
      to: { path: "^src/(domain|db|surfaces)/|^src/(app|compose|main|config)\\.ts$" },
    },
    {
      name: "only-composition-wires",
      severity: "error",
      comment: "Only the composition (and the CLI, which starts it) imports app.ts, compose.ts or main.ts.",
      from: { path: "^src/", pathNot: "^src/(app|compose|main)\\.ts$|^src/surfaces/cli/" },
      to: { path: "^src/(app|compose|main)\\.ts$" },
    },
    {
      name: "domain-modules-closed",
      severity: "error",
      comment:
        "A domain module's tables are its own: another module calls its public functions (a service or a helper beside it), never its *-repository.ts. A module imports its own repository.",
      from: {
        path: "^src/domain/([^/]+)/",
        pathNot: [
          // billing verify is the operators' check of invariants that span modules, over every module's
          // tables: it reads an invoice's lines with the invoice repository's own SQL (LINES_JSON), so that
          // it checks them as the service reads them.
          "^src/domain/invariants/invariants-repository\\.ts$",
        ],
      },
      to: { path: "^src/domain/.+-repository\\.ts$", pathNot: "^src/domain/$1/" },
    },
    {
      name: "surfaces-not-to-repositories",
      severity: "error",
      comment: "A surface calls the services (domain/services.ts) and their helpers, never a repository.",
      from: { path: "^src/surfaces/" },
      to: { path: "^src/domain/.+-repository\\.ts$" },
    },
    {
      name: "not-to-unresolvable",
      severity: "error",
      comment: "An import that resolves to no file.",
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    // NodeNext import specifiers name the emitted .js file: with the tsConfig above, dependency-cruiser
    // resolves them to the .ts source beside it.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".d.ts", ".json"],
      mainFields: ["module", "main", "types", "typings"],
    },
    skipAnalysisNotInRules: true,
  },
};
