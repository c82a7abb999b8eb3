// Where dispatch bundles are kept: the vault's bundles/ folder, or an S3-compatible object
// store (Bun's S3 client) when S3 settings are given.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { S3Client } from "bun";
import { writeFileAtomic } from "../../common/atomic-write";
import { DomainError } from "../../common/domain-error";
import { safeVaultPath } from "../vault/safe-path";

export interface BundleStore {
  /** Stores the bundle; returns where it is (a vault path or an s3:// URL). */
  put(bundleId: string, markdown: string): Promise<string>;
}

export function vaultBundleStore(vault: string): BundleStore {
  return {
    async put(id, markdown) {
      const rel = `bundles/${id}.md`;
      const abs = await safeVaultPath(vault, rel);
      await mkdir(join(abs, ".."), { recursive: true });
      await writeFileAtomic(abs, markdown);
      return rel;
    },
  };
}

export interface S3Settings {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
}

export function s3BundleStore(s: S3Settings): BundleStore {
  const client = new S3Client({ bucket: s.bucket, endpoint: s.endpoint, region: s.region, accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey });
  return {
    async put(id, markdown) {
      const key = `bundles/${id}.md`;
      try {
        await client.write(key, markdown, { type: "text/markdown" });
      } catch (err) {
        throw new DomainError("upstream", "object_store_error", `the object store refused bundle ${id}: ${(err as Error).message}`);
      }
      return `s3://${s.bucket}/${key}`;
    },
  };
}
