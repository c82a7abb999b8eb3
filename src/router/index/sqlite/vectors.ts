// Vectors for the SQLite index: float32 blobs in a plain table, compared with sqlite-vec's
// vec_distance_cosine() when the extension loads, else by brute force in JS (Bun on macOS
// ships a SQLite that refuses extensions). One storage format, so a file moves freely
// between the two. sqlite-vec 0.1 has no approximate index either, so both are exact scans.
import type { Database, SQLQueryBindings } from "bun:sqlite";
import * as sqliteVec from "sqlite-vec";
import { checkVector } from "../embeddings.ts";
import { VectorsUnavailableError } from "../errors.ts";
import type { DocRow } from "./ranking.ts";
import type { Reader } from "./text-rows.ts";

/** A document's row (ranking.ts) with its nearest chunk and that chunk's distance. */
export type NearestRow = Omit<DocRow, "name"> & { seq: number; distance: number };

export class SqliteVectors {
  readonly engine: "sqlite-vec" | "js";
  /** Why sqlite-vec did not load, when it did not. */
  readonly fallbackReason: string | undefined;

  constructor(
    private readonly db: Database,
    readonly dim: number,
    useExtension = true,
  ) {
    if (!useExtension) {
      this.engine = "js";
      this.fallbackReason = "sqlite-vec disabled by configuration";
      return;
    }
    try {
      sqliteVec.load(db);
      this.engine = "sqlite-vec";
    } catch (err) {
      this.engine = "js";
      this.fallbackReason = (err as Error).message;
    }
  }

  static unavailable(): never {
    throw new VectorsUnavailableError("vector search needs an embedding dimension (EMBEDDINGS_DIM) configured for the index");
  }

  put(docId: number, seq: number, vector: number[]): void {
    this.db.query("INSERT OR REPLACE INTO doc_vectors (doc_id, seq, embedding) VALUES (?, ?, ?)").run(docId, seq, toBlob(vector));
  }

  /** The nearest chunk of each document, nearest documents first; `filter` is SQL over `d`, run by the store's `read`. */
  nearest(read: Reader, vector: number[], limit: number, filter: string, params: SQLQueryBindings[]): NearestRow[] {
    checkVector(vector, this.dim);
    if (norm(vector) === 0) return [];
    const from = `FROM doc_vectors v JOIN docs d ON d.id = v.doc_id WHERE 1 = 1${filter}`;
    if (this.engine === "sqlite-vec") {
      return read<NearestRow>(
        `SELECT v.seq AS seq, min(vec_distance_cosine(v.embedding, ?)) AS distance, d.*
           ${from} GROUP BY v.doc_id ORDER BY distance, d.path LIMIT ?`,
      ).all(toBlob(vector), ...params, limit);
    }
    const best = new Map<number, NearestRow>();
    const rows = read<Omit<NearestRow, "distance"> & { embedding: Uint8Array }>(`SELECT v.seq AS seq, v.embedding AS embedding, d.* ${from}`).iterate(
      ...params,
    );
    for (const { embedding, ...row } of rows) {
      const distance = cosineDistance(vector, fromBlob(embedding));
      const prior = best.get(row.id);
      if (!prior || distance < prior.distance) best.set(row.id, { ...row, distance });
    }
    return [...best.values()].sort((a, b) => a.distance - b.distance || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).slice(0, limit);
  }
}

function toBlob(vector: number[]): Uint8Array {
  return new Uint8Array(new Float32Array(vector).buffer);
}

function fromBlob(blob: Uint8Array): Float32Array {
  // Copy: the blob's offset need not be 4-byte aligned.
  return new Float32Array(blob.slice().buffer);
}

function norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (v[i] as number) ** 2;
  return Math.sqrt(s);
}

function cosineDistance(a: number[], b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
}
