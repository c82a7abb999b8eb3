// service-cli hooks <sub-command>: the companion repositories (hooks package, bundle, hub).
import { defineCommand } from "citty";
import { lazyCommands } from "../_shared";

export default defineCommand({
  meta: { name: "hooks", description: "Manage the companion repositories (hooks package, its bundle, the agent hub)" },
  subCommands: lazyCommands({ sync: () => import("./hooks/sync") }),
});
