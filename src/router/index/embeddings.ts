// Checks the vectors offered with a document (or computes them through the caller's embed
// callback) before either store writes a row: one per chunk, each of the index's dimension.
import { DimensionMismatchError, VectorsUnavailableError } from "./errors.ts";
import type { UpsertOptions } from "./types.ts";

export async function resolveEmbeddings(
  opts: UpsertOptions,
  chunkCount: number,
  dim: number | undefined,
  inputs: () => string[],
): Promise<number[][] | undefined> {
  if (!opts.embeddings && !opts.embed) return undefined;
  if (dim === undefined) {
    throw new VectorsUnavailableError("embeddings were given but this index has no embedding dimension configured (EMBEDDINGS_DIM)");
  }
  const vectors = opts.embeddings ?? (await opts.embed!(inputs()));
  if (vectors.length !== chunkCount) {
    throw new RangeError(`expected ${chunkCount} embeddings (one per chunk, in chunkDocument() order), got ${vectors.length}`);
  }
  for (const v of vectors) checkVector(v, dim);
  return vectors;
}

/** A vector the index can store or compare: the configured length, finite numbers. */
export function checkVector(vector: number[], dim: number): void {
  if (vector.length !== dim) {
    throw new DimensionMismatchError(
      dim,
      vector.length,
      "the embedding model's dimension differs from the index's; configure the model the index was built with",
    );
  }
  if (!vector.every(Number.isFinite)) throw new RangeError("an embedding holds a value that is not a finite number");
}
