// router-cli down: stop the stack and every other compose project holding our container
// names. Volumes survive (never -v).
import { defineCommand } from "citty";
import { bringDownOthers, composeArgs, docker, requireDeployment } from "./_docker";

export default defineCommand({
  meta: { name: "down", description: "Stop the detected stack (volumes survive)" },
  async run() {
    const d = await requireDeployment();
    const down = await docker(composeArgs(d, "down"));
    await bringDownOthers(d);
    return down.code === 0 ? 0 : 1;
  },
});
