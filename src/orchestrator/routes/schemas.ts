// Shared by several orchestrator routes: the responses every protected route documents (ours, and
// OpenAI's shape under /v1).
import { errorResponse, openAiErrorResponse, STORAGE_FULL_DESCRIPTION } from "../../common/errors";

export const authResponses = {
  401: errorResponse("Missing or wrong API key"),
} as const;

export const openAiAuthResponses = {
  401: openAiErrorResponse("Missing or wrong API key"),
} as const;

/** The 507 of every route that writes (a full disk is a storage error, not a bug). */
export const storageFullResponses = {
  507: errorResponse(STORAGE_FULL_DESCRIPTION),
} as const;

export const openAiStorageFullResponses = {
  507: openAiErrorResponse(STORAGE_FULL_DESCRIPTION),
} as const;
