// router-cli: the knowledge router's command-line client (spec: knowledge-router.md, "Client tool").
// The Claude Code hooks (`router-cli hook <event>`) run on every prompt, so they skip the
// command parser and load only their own module; everything else goes through router/_main.ts.
// _tty decides on colour before citty and consola load.
import "./_tty";
import { HOOK_EVENTS, type HookEvent } from "./router/hook/events";

// Exactly `hook <event>`: anything more (--help, a stray flag) goes through the parser, which
// answers it or refuses it like any command's.
const args = process.argv.slice(2);
const [first, second] = args;
if (args.length === 2 && first === "hook" && (HOOK_EVENTS as readonly string[]).includes(second ?? "")) {
  void import("./router/hook/run").then((m) => m.runHook(second as HookEvent));
} else {
  void import("./router/_main");
}
