// router-cli version: spec "version | print version"; name and version, like service-cli's.
import { defineCommand } from "citty";
import { VERSION } from "../../src/common/version";

export default defineCommand({
  meta: { name: "version", description: "Print name and version" },
  run() {
    console.log(`router-cli ${VERSION}`);
  },
});
