// A bench's numeric setting: the environment variable when it holds a positive number, else the default.
export function envNum(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** The same for a setting where 0 means "off": the variable when it holds a number ≥ 0, else the default. */
export function envCount(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
}
