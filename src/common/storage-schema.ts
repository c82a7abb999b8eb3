// The health reports' view of a storage path (storage.ts), shared by both services' routes.
import { z } from "@hono/zod-openapi";

export const StorageStatus = z
  .object({
    role: z.string().openapi({ description: "what the path holds, as the configuration names it", example: "DATA_DIR" }),
    path: z.string().openapi({ example: "/vault/.brain" }),
    free_bytes: z.number().int().nullable().openapi({ description: "bytes a write may still use there; null when the path cannot be read" }),
    full: z.boolean().openapi({ description: "less than 1 MiB free: writes there answer 507 storage_full" }),
  })
  .openapi("StorageStatus");
