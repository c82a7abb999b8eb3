// Moved to test/support/process.ts (shared with the suites); kept for scale.ts until it imports that.
export { freePort } from "../../../test/support/process.ts";
