// The index's failures as domain errors with a code, so the edges map them without knowing the stores.
import { DomainError } from "../../common/domain-error";

/** The query string cannot be understood (e.g. an unknown producer): invalid. */
export class QueryError extends DomainError {
  constructor(message: string, details?: unknown) {
    super("invalid", "invalid_query", message, { details });
    this.name = "QueryError";
  }
}

/**
 * Vectors of one dimension were stored and another is configured or offered. Refused: mixing
 * them would make every similarity meaningless: a conflict.
 */
export class DimensionMismatchError extends DomainError {
  constructor(
    readonly stored: number,
    readonly offered: number,
    remedy: string,
  ) {
    super(
      "conflict",
      "embedding_dimension_mismatch",
      `the index holds ${stored}-dimensional embeddings but ${offered} dimensions were configured or given: ${remedy}`,
      { details: { stored, offered } },
    );
    this.name = "DimensionMismatchError";
  }
}

/** Vectors were asked for but the store has none configured, or the engine lacks them. */
export class VectorsUnavailableError extends DomainError {
  constructor(message: string) {
    super("unavailable", "vectors_unavailable", message);
    this.name = "VectorsUnavailableError";
  }
}
