// Plain-text tables and number formatting for benchmark reports.

/** Render rows as a left-aligned table; the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  const [head, ...body] = rows;
  if (!head) return "";
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

/** Fixed decimals, thousands separated; "n/a" for NaN. */
export function num(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return "n/a";
  return value.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** A value with its verdict against a target: "123 ms ok" or "456 ms MISS". */
export function judged(text: string, meets: boolean | undefined): string {
  return meets === undefined ? text : `${text} ${meets ? "ok" : "MISS"}`;
}
