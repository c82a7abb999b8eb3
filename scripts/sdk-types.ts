// `bun run sdk-types [out-dir]`: writes router.d.ts and service.d.ts, openapi-typescript's types for
// openapi/router.json and openapi/service.json (default options), for an openapi-fetch client.
// openapi-typescript builds its output with TypeScript 5's compiler API, which this repository's
// TypeScript 7 (the Go port) does not have: "typescript" resolves to the typescript5 alias here.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { plugin } from "bun";

const root = join(import.meta.dir, "..");
const typescript5 = Bun.resolveSync("typescript5", root);
// Bun 1.4 does not consult a runtime plugin's onResolve for openapi-typescript's `import ts from
// "typescript"`, so the file that import resolves to (TypeScript 7's stub) is loaded as TypeScript 5.
const typescript7 = Bun.resolveSync("typescript", join(root, "node_modules", "openapi-typescript"));
plugin({
  name: "typescript5",
  setup(build) {
    build.onLoad({ filter: /[\\/]typescript[\\/]lib[\\/]version\.cjs$/ }, (args) =>
      args.path === typescript7 ? { contents: `export { default } from ${JSON.stringify(typescript5)};`, loader: "js" } : undefined,
    );
  },
});
const { default: openapiTS, astToString } = await import("openapi-typescript");

const out = resolve(process.argv[2] ?? join(root, "sdk"));
mkdirSync(out, { recursive: true });
for (const name of ["router", "service"]) {
  const ast = await openapiTS(new URL(`file://${join(root, "openapi", `${name}.json`)}`));
  writeFileSync(join(out, `${name}.d.ts`), astToString(ast));
  console.log(`wrote ${join(out, `${name}.d.ts`)}`);
}
