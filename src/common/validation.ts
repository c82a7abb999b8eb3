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

/**
 * The first string in a parsed request (a JSON body, query, params) that is not well-formed
 * Unicode: a lone UTF-16 surrogate, which a JSON body can carry as `"\ud800"` but no file, header,
 * URL or database can hold. Its field and the reason, or undefined when every string is whole.
 */
export function illFormedString(value: unknown, path: Array<string | number> = []): FieldIssue | undefined {
  if (typeof value === "string") {
    if (value.isWellFormed()) return undefined;
    const at = value.search(/\p{Surrogate}/u);
    return {
      path: path.length > 0 ? path.map(String).join(".") : "(body)",
      message: `is not valid Unicode: a lone UTF-16 surrogate at character ${at} (send the text as UTF-8, or escape whole surrogate pairs)`,
    };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = illFormedString(value[i], [...path, i]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const key = k.isWellFormed()
        ? undefined
        : { path: [...path, "(key)"].map(String).join("."), message: "is not valid Unicode: a lone UTF-16 surrogate in a member name" };
      if (key) return key;
      const found = illFormedString(v, [...path, k]);
      if (found) return found;
    }
  }
  return undefined;
}
