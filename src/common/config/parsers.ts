// String parsers for settings: every raw value is a string (env, .env, or a YAML scalar
// turned into one), and each parser says in its message what it expected.
import { z } from "zod";

export const str = () => z.string();

export const int = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^-?\d+$/, `expected a whole number between ${min} and ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `expected a whole number between ${min} and ${max}`).max(max, `expected a whole number between ${min} and ${max}`));

/** 0 asks the OS for a free port (tests, side-by-side instances); the log says which. */
export const port = () => int(0, 65535);

const TRUE = new Set(["1", "true", "yes", "on"]);
const FALSE = new Set(["0", "false", "no", "off"]);
export const bool = () =>
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => TRUE.has(v) || FALSE.has(v), "expected true or false (also 1/0, yes/no, on/off)")
    .transform((v) => TRUE.has(v));

export const list = () =>
  z.string().transform((v) =>
    v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z
    .string()
    .trim()
    .refine((v): v is T[number] => (values as readonly string[]).includes(v), `expected one of: ${values.join(", ")}`)
    .transform((v) => v as T[number]);

export const url = () =>
  z
    .string()
    .trim()
    .refine((v) => URL.canParse(v), "expected a URL such as http://host:port");
