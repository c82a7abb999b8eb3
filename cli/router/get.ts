// router-cli get PATH [--lines 10-40] [--max-chars N] [--json]: one note, its links and backlinks.
import { defineCommand } from "citty";
import { usage } from "../_errors";
import { client, connectionArgs } from "./_context";
import { formatNote } from "./_notes-view";

export default defineCommand({
  meta: { name: "get", description: "Read one note by vault path (as search names it), with its links and backlinks" },
  args: {
    ...connectionArgs,
    path: { type: "positional", required: true, description: "vault-relative path, e.g. raw/runbooks/deploy.md" },
    lines: { type: "string", alias: "l", description: "body lines START-END, START- or START (1 = first line after the frontmatter)" },
    "max-chars": { type: "string", description: "cut the body at this many characters" },
    json: { type: "boolean", description: "print the note as JSON" },
  },
  async run({ args }) {
    const maxChars = args["max-chars"] === undefined ? undefined : Number(args["max-chars"]);
    if (maxChars !== undefined && !(Number.isInteger(maxChars) && maxChars > 0))
      usage(`--max-chars ${JSON.stringify(args["max-chars"])}: give a positive whole number`);
    const note = await client(args).note(args.path, { lines: args.lines, maxChars });
    console.log(args.json ? JSON.stringify(note) : formatNote(note));
  },
});
