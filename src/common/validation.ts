// Turns a zod failure into a message that names every failing field, and details a
// client can act on: [{path: "limit", message: "..."}].
import type { ZodError } from "zod";

export interface FieldIssue {
  path: string;
  message: string;
}

export function describeZodError(err: ZodError): { message: string; details: FieldIssue[] } {
  const details = err.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join(".") : "(body)",
    message: issue.message,
  }));
  const message = `invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")}`;
  return { message, details };
}
