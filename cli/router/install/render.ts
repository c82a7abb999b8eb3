// Renders the bundled compose.yml into ~/.router/ for an installed stack: the image comes
// from a registry (no source tree to build from), the object store is dropped when external
// object storage is named, and the collector's config is written beside it.
import { parseDocument } from "yaml";

export interface RenderOptions {
  externalObjectStore: boolean;
}

export function renderCompose(template: string, opts: RenderOptions): string {
  const doc = parseDocument(template, { merge: false });
  doc.deleteIn(["x-brain-image", "build"]);
  if (opts.externalObjectStore) {
    doc.deleteIn(["services", "object-store"]);
    doc.deleteIn(["services", "object-store-init"]);
  }
  return `# rendered by router-cli install; edit freely, install keeps what is here\n${doc.toString({ lineWidth: 0 })}`;
}
