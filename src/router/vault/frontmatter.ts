// Writing markdown with YAML frontmatter. Plain data (strings, finite numbers, booleans, null,
// arrays and objects of those — all ingest and the tick write) goes through Bun's native YAML
// writer, many times faster than the `yaml` package on every ingest; it quotes what needs quoting
// and reads back the same through Bun.YAML.parse. Anything else (a Date, a bigint) keeps the
// `yaml` package's rendering, loaded the first time such a value comes (a process that never
// meets one does not hold the package).

export function withFrontmatter(data: Record<string, unknown>, body: string): string {
  const clean = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
  const yaml = isPlain(clean) ? Bun.YAML.stringify(clean, null, 2) : (require("yaml") as typeof import("yaml")).stringify(clean, { lineWidth: 0 });
  return `---\n${yaml.trimEnd()}\n---\n\n${body.trimEnd()}\n`;
}

function isPlain(v: unknown): boolean {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true;
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isPlain);
  if (typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) return Object.values(v as object).every(isPlain);
  return false;
}
