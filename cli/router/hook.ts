// router-cli hook session-start | prompt | stop: the hooks Claude Code runs (install merges
// them into ~/.claude/settings.json; jobs get them through --settings). router-cli.ts runs
// these without loading the rest of the CLI; this declaration is for --help.
import { defineCommand } from "citty";
import { runHook } from "./hook/run";

const event = (name: "session-start" | "prompt" | "stop", description: string) => defineCommand({ meta: { name, description }, run: () => runHook(name) });

export default defineCommand({
  meta: { name: "hook", description: "Claude Code hooks: the feed at session start, new signals on each prompt, markers at stop (hook input JSON on stdin)" },
  subCommands: {
    "session-start": event("session-start", "SessionStart: print the feed as additionalContext"),
    prompt: event("prompt", "UserPromptSubmit: print signals raised since the session last looked, and the notes that bear on the prompt"),
    stop: event("stop", "Stop: post the turn's markers (buffered to the outbox when the router is down), replay the outbox"),
  },
});
