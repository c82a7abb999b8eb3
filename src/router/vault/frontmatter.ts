// Writing markdown with YAML frontmatter (the yaml library quotes what needs quoting).
import { stringify } from "yaml";

export function withFrontmatter(data: Record<string, unknown>, body: string): string {
  const clean = Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
  return `---\n${stringify(clean, { lineWidth: 0 }).trimEnd()}\n---\n\n${body.trimEnd()}\n`;
}
