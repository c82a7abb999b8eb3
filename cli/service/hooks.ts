// service-cli hooks <sub-command>: the companion repositories (hooks package, bundle, hub).
import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "hooks", description: "Manage the companion repositories (hooks package, its bundle, the agent hub)" },
  subCommands: {
    sync: () => import("./hooks/sync").then((m) => m.default),
  },
});
