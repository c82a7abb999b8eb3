// router-cli build [SERVICE...]: rebuild and restart the detected stack, then list it.
import { defineCommand } from "citty";
import { bringDownOthers, composeArgs, docker, requireDeployment } from "./_docker";

export default defineCommand({
  meta: { name: "build", description: "Rebuild and restart the detected stack, then list it" },
  args: { services: { type: "positional", required: false, valueHint: "SERVICE...", description: "services to rebuild (default: all)" } },
  async run({ args }) {
    const services = (args._ as string[]) ?? [];
    const d = await requireDeployment();
    await bringDownOthers(d);
    if ((await docker(composeArgs(d, "build", ...services))).code !== 0) return 1;
    if ((await docker(composeArgs(d, "up", "-d", "--force-recreate", ...services))).code !== 0) return 1;
    await docker(composeArgs(d, "ps"));
  },
});
