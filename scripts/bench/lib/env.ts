// A bench's numeric setting: the environment variable when it holds a positive number, else the default.
export function envNum(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}
