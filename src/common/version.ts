// The version every binary and /health reports. `bun build --compile` embeds it with
// --define BRAIN_STACK_VERSION='"x.y.z"'; from source it is read from package.json.
import pkg from "../../package.json" with { type: "json" };

declare const BRAIN_STACK_VERSION: string | undefined;

export const VERSION: string = typeof BRAIN_STACK_VERSION === "string" ? BRAIN_STACK_VERSION : pkg.version;
