// Shared by several orchestrator routes: the responses every protected route documents (ours, and
// OpenAI's shape under /v1).
import { errorResponse, openAiErrorResponse } from "../../common/errors";

export const authResponses = {
  401: errorResponse("Missing or wrong API key"),
} as const;

export const openAiAuthResponses = {
  401: openAiErrorResponse("Missing or wrong API key"),
} as const;
