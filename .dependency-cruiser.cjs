/** The layering rules of docs/ARCHITECTURE.md, checked by `bun run depcheck` (CI). */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "An import cycle: split the shared part out (often into src/core/).",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-the-ground-floor",
      severity: "error",
      comment: "src/core/ holds shared vocabulary and primitives and imports nothing of the service above it.",
      from: { path: "^src/core/" },
      to: { path: "^src/(?!core/)" },
    },
    {
      name: "features-meet-through-their-front-door",
      severity: "error",
      comment:
        "A feature uses another only through its index.ts (routes), service.ts (logic) or model.ts (wire schemas).",
      from: { path: "^src/modules/([^/]+)/" },
      to: {
        path: "^src/modules/[^/]+/",
        pathNot: ["^src/modules/$1/", "^src/modules/[^/]+/(index|service|model)\\.ts$"],
      },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a cycle of types still ties the files together.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
