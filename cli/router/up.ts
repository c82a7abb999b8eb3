// router-cli up: start the detected stack (bringing down other stacks holding our names),
// then run the index migrations inside it.
import { defineCommand } from "citty";
import { fail } from "../_errors";
import { bringDownOthers, composeArgs, docker, requireDeployment } from "./_docker";

export default defineCommand({
  meta: { name: "up", description: "Start the detected stack (and run its migrations)" },
  async run() {
    const d = await requireDeployment();
    await bringDownOthers(d);
    const up = await docker(composeArgs(d, "up", "-d"));
    if (up.code !== 0) return 1;
    const migrate = await docker(composeArgs(d, "exec", "-T", "brain-api", "router-cli", "migrate"));
    if (migrate.code !== 0) fail("the stack is up but its migrations failed (router-cli logs brain-api)");
    await docker(composeArgs(d, "ps"));
  },
});
