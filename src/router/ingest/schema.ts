// The one declaration of ingest's input: POST /ingest's body, each item of POST /ingest/batch, the
// MCP tool's arguments, the client's input and the domain's IngestRequest type.
import { z } from "@hono/zod-openapi";
import { INGEST_SOURCE_MAX_CHARS, INGEST_TAGS, INGEST_TITLE_MAX_CHARS } from "./limits";

export const IngestRequest = z
  .object({
    content: z
      .string()
      .refine((s) => s.trim().length > 0, "content is empty")
      .openapi({ example: "# Deploys\nRoll back with `make rollback`." }),
    tags: z
      .array(z.string().min(1).max(INGEST_TAGS.maxChars, `a tag is at most ${INGEST_TAGS.maxChars} characters`))
      .max(INGEST_TAGS.max, `at most ${INGEST_TAGS.max} tags`)
      .default([]),
    title: z.string().max(INGEST_TITLE_MAX_CHARS).optional(),
    source: z.string().max(INGEST_SOURCE_MAX_CHARS).optional().openapi({ description: "who sent it (default api)" }),
  })
  .openapi("IngestRequest");
export type IngestRequest = z.infer<typeof IngestRequest>;
