// The index's failures as values with a code, so routes map them without knowing the stores.
import { HttpError } from "../../common/http-error.ts";

/** The query string cannot be understood (e.g. an unknown producer). → 400. */
export class QueryError extends HttpError {
  constructor(message: string, details?: unknown) {
    super(400, "invalid_query", message, details);
    this.name = "QueryError";
  }
}

/**
 * Vectors of one dimension were stored and another is configured or offered. Refused: mixing
 * them would make every similarity meaningless. → 409.
 */
export class DimensionMismatchError extends HttpError {
  constructor(
    readonly stored: number,
    readonly offered: number,
    remedy: string,
  ) {
    super(
      409,
      "embedding_dimension_mismatch",
      `the index holds ${stored}-dimensional embeddings but ${offered} dimensions were configured or given: ${remedy}`,
      { stored, offered },
    );
    this.name = "DimensionMismatchError";
  }
}

/** Vectors were asked for but the store has none configured, or the engine lacks them. */
export class VectorsUnavailableError extends HttpError {
  constructor(message: string) {
    super(503, "vectors_unavailable", message);
    this.name = "VectorsUnavailableError";
  }
}
