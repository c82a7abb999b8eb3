// router-cli status: the stack's containers, then a shallow GET /health.
import { defineCommand } from "citty";
import { consola } from "consola";
import { client, connectionArgs } from "./_context";
import { composeArgs, docker, requireDeployment } from "./_docker";

export default defineCommand({
  meta: { name: "status", description: "List the stack's containers and check /health" },
  args: { ...connectionArgs },
  async run({ args }) {
    const d = await requireDeployment();
    await docker(composeArgs(d, "ps"));
    const c = client(args, 5_000);
    const h = await c.health();
    consola.success(`${c.baseUrl}/health: ${h.status} (${h.service} ${h.version})`);
  },
});
