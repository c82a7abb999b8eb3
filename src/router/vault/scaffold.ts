// Writes or repairs a vault's layout: creates missing folders and (re)writes .brain-schema
// when it is missing or not the current version. Idempotent; never deletes or overwrites a
// user's file (.brain-schema is the system's own: the scaffold is its authoritative writer).
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { SCHEMA_FILE, schemaDocument, VAULT_FOLDERS } from "./layout";

export interface ScaffoldResult {
  created: string[];
  schemaWritten: boolean;
}

export async function scaffold(vault: string): Promise<ScaffoldResult> {
  const created: string[] = [];
  await mkdir(vault, { recursive: true });
  for (const { path } of VAULT_FOLDERS) {
    const made = await mkdir(join(vault, path), { recursive: true });
    if (made !== undefined) created.push(`${path}/`);
  }
  const schemaPath = join(vault, SCHEMA_FILE);
  const wanted = schemaDocument();
  const current = await readFile(schemaPath, "utf8").catch(() => null);
  const schemaWritten = current !== wanted;
  if (schemaWritten) await writeFileAtomic(schemaPath, wanted);
  return { created, schemaWritten };
}
