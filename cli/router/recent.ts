// router-cli recent [--since 2h|ISO] [--producer P] [--tag T] [--prefix raw/] [-n 50] [--json]:
// what changed in the vault, newest first.
import { defineCommand } from "citty";
import { usage } from "../_errors";
import { client, connectionArgs } from "./_context";
import { formatRecent, parseSince } from "./_notes-view";

export default defineCommand({
  meta: { name: "recent", description: "Notes changed since a time, newest first" },
  args: {
    ...connectionArgs,
    since: { type: "string", alias: "s", description: "ISO time, or a duration back from now: 90m, 2h, 3d, 1w" },
    producer: { type: "string", alias: "p", description: "raw, ingest, lessons, arcs, signals, feed or markers" },
    tag: { type: "string", alias: "t" },
    prefix: { type: "string", description: "path prefix, e.g. raw/runbooks/" },
    limit: { type: "string", alias: "n", default: "50", description: "notes per page (1–500)" },
    cursor: { type: "string", description: "next page: the cursor a previous page printed" },
    json: { type: "boolean", description: "print the page as JSON" },
  },
  async run({ args }) {
    let since: string | undefined;
    try {
      since = args.since ? parseSince(args.since) : undefined;
    } catch (err) {
      usage((err as Error).message);
    }
    const page = await client(args).recent({
      since,
      producer: args.producer,
      tag: args.tag,
      prefix: args.prefix,
      limit: Number(args.limit),
      cursor: args.cursor,
    });
    console.log(args.json ? JSON.stringify(page) : formatRecent(page));
  },
});
