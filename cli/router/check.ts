// router-cli check [--pipeline-only] [--deps-only] [--json]: /health/deep and
// /health/pipeline in one screen. Exit 0 clean, 1 broken, 2 degraded (spec). A missing
// server token, a rejected token or a router that does not answer is broken, said in the
// line every command prints for it (cli/_errors.ts).
import { defineCommand } from "citty";
import { consola } from "consola";
import type { DeepReport, PipelineReport } from "../../src/router/client";
import { failure, usage } from "../_errors";
import { client, connectionArgs } from "./_context";

export type Outcome = "clean" | "degraded" | "broken";
export const EXIT: Record<Outcome, number> = { clean: 0, broken: 1, degraded: 2 };

export function judge(deep: Pick<DeepReport, "probes"> | undefined, pipeline: Pick<PipelineReport, "stages"> | undefined): Outcome {
  const verdicts = [...(deep?.probes ?? []).map((p) => p.verdict), ...(pipeline?.stages ?? []).map((s) => s.verdict)];
  if (verdicts.includes("fail")) return "broken";
  if (verdicts.includes("warn")) return "degraded";
  return "clean";
}

const brief = (v: unknown) => {
  const text = typeof v === "string" ? v : JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
};

export default defineCommand({
  meta: { name: "check", description: "Deep and pipeline health in one screen (exit 0 clean, 1 broken, 2 degraded)" },
  args: {
    ...connectionArgs,
    "pipeline-only": { type: "boolean", description: "only GET /health/pipeline" },
    "deps-only": { type: "boolean", description: "only GET /health/deep" },
    json: { type: "boolean", description: "machine output on stdout" },
  },
  async run({ args }) {
    if (args["pipeline-only"] && args["deps-only"]) usage("--pipeline-only and --deps-only exclude each other");
    const c = client(args, 60_000);
    let deep: DeepReport | undefined;
    let pipeline: PipelineReport | undefined;
    let problem: string | undefined;
    try {
      [deep, pipeline] = await Promise.all([args["pipeline-only"] ? undefined : c.healthDeep(), args["deps-only"] ? undefined : c.healthPipeline()]);
    } catch (err) {
      problem = failure(err).message;
    }
    const outcome: Outcome = problem ? "broken" : judge(deep, pipeline);
    if (args.json) {
      console.log(
        JSON.stringify(
          { outcome, exit_code: EXIT[outcome], ...(problem ? { error: problem } : {}), ...(deep ? { deep } : {}), ...(pipeline ? { pipeline } : {}) },
          null,
          2,
        ),
      );
      return EXIT[outcome];
    }
    if (problem) {
      consola.error(problem);
      return EXIT.broken;
    }
    const rows: string[][] = [];
    for (const p of deep?.probes ?? []) rows.push([p.verdict.toUpperCase(), `deps:${p.name}`, `${p.ms !== undefined ? `${p.ms} ms ` : ""}${p.message ?? ""}`]);
    for (const s of pipeline?.stages ?? []) rows.push([s.verdict.toUpperCase(), `pipeline:${s.name}`, s.message || brief(s.evidence ?? {})]);
    const widths = [7, Math.max(...rows.map((r) => r[1]!.length), 5)];
    console.log(`${"VERDICT".padEnd(widths[0]!)}  ${"CHECK".padEnd(widths[1]!)}  EVIDENCE`);
    for (const r of rows) console.log(`${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`);
    const say = outcome === "clean" ? consola.success : outcome === "degraded" ? consola.warn : consola.error;
    say(`${outcome} (exit ${EXIT[outcome]})`);
    return EXIT[outcome];
  },
});
