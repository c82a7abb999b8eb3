// Responses every protected orchestrator route documents.
import { errorResponse } from "../../common/errors";

export const authResponses = {
  401: errorResponse("Missing or wrong API key"),
} as const;
