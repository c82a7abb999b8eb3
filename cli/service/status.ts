// service-cli status [--json]: GET /health, printed as Status and Service (spec); exit 1 with
// one line when the orchestrator does not answer.
import { defineCommand } from "citty";
import { client, jsonArg, printJson } from "./_context";

export default defineCommand({
  meta: { name: "status", description: "Check that the orchestrator answers (GET /health)" },
  args: { ...jsonArg },
  async run({ args }) {
    const c = client(10_000);
    const health = await c.health();
    if (args.json) return printJson({ ...health, url: c.baseUrl });
    console.log(`Status:   ${health.status}`);
    console.log(`Service:  ${health.service}`);
    console.log(`Version:  ${health.version}`);
    console.log(`URL:      ${c.baseUrl}`);
  },
});
