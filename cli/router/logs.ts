// router-cli logs [SERVICE] [-f] [--since 10m] [--tail N]: docker compose logs passthrough.
import { defineCommand } from "citty";
import { usage } from "../_errors";
import { composeArgs, docker, requireDeployment } from "./_docker";

export default defineCommand({
  meta: { name: "logs", description: "Show the stack's logs" },
  args: {
    service: { type: "positional", required: false, description: "one service (default: all)" },
    follow: { type: "boolean", alias: "f", description: "follow" },
    since: { type: "string", description: "e.g. 10m, 2h, or a timestamp" },
    tail: { type: "string", description: "lines from the end of each log" },
  },
  async run({ args }) {
    if (args.tail !== undefined && !/^\d+$/.test(args.tail)) usage("--tail takes a number of lines");
    const d = await requireDeployment();
    const flags = [...(args.follow ? ["--follow"] : []), ...(args.since ? ["--since", args.since] : []), ...(args.tail ? ["--tail", args.tail] : [])];
    const res = await docker(composeArgs(d, "logs", ...flags, ...(args.service ? [args.service] : [])));
    return res.code === 0 ? 0 : 1;
  },
});
