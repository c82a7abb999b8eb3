// service-cli version: spec "version | prints name and version".
import { defineCommand } from "citty";
import { VERSION } from "../../src/common/version";

export default defineCommand({
  meta: { name: "version", description: "Print name and version" },
  run() {
    console.log(`service-cli ${VERSION}`);
  },
});
