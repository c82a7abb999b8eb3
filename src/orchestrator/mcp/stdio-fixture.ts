// A process serving the MCP tools over stdio, for stdio.test.ts: a job service on temp-dir
// stores whose in-test executor finishes each job at once.
import { serviceHarness, testProfiles } from "../../../test/support/job-service";
import { serveMcpStdio } from "./stdio";

const h = await serviceHarness();
h.executor.auto = 1;
await serveMcpStdio({ jobs: h.service, profiles: testProfiles });
await h.cleanup();
process.stderr.write("stdio session ended\n");
process.exit(0);
