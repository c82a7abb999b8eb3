// What GET /profiles and the MCP tool list_profiles show: every usable profile, and every
// profile file that could not be read (reported by name and skipped, never fatal).
import { z } from "@hono/zod-openapi";

const ProfileSummary = z
  .object({
    name: z.string().openapi({ example: "code" }),
    description: z.string().openapi({ example: "Implements a change and opens a pull request" }),
    model: z.string().openapi({ example: "sonnet" }),
    max_turns: z.number().int().openapi({ example: 80 }),
    auto_pr: z.boolean().openapi({ example: true }),
    permission_mode: z.string().openapi({ description: "The agent's --permission-mode", example: "bypassPermissions" }),
    timeout_seconds: z.number().int().openapi({ description: "Job timeout: the profile's own, else SERVICE_CLAUDE_TIMEOUT", example: 3600 }),
    max_budget_usd: z
      .number()
      .nullable()
      .optional()
      .openapi({ description: "Spending cap per job in USD (the CLI's --max-budget-usd); null = none", example: 5 }),
    source: z.string().openapi({
      description: "Where it was read: bundled, hooks (the hooks package), shared (SERVICE_SHARED_FS_ROOT/profiles) or user (~/.service/profiles)",
      example: "bundled",
    }),
  })
  .openapi("Profile");
export type ProfileSummary = z.infer<typeof ProfileSummary>;

const ProfileProblem = z
  .object({
    name: z.string().openapi({ description: "The profile (directory) name", example: "broken" }),
    path: z.string().nullable().openapi({ example: "/home/me/.service/profiles/broken/profile.yml" }),
    message: z.string().openapi({ example: "max_turns: expected a positive integer" }),
  })
  .openapi("ProfileProblem");
export type ProfileProblem = z.infer<typeof ProfileProblem>;

export const ProfileList = z
  .object({
    profiles: z.array(ProfileSummary),
    errors: z.array(ProfileProblem).openapi({ description: "Profiles that could not be loaded and were skipped" }),
  })
  .openapi("ProfileList");
export type ProfileList = z.infer<typeof ProfileList>;
