// service-cli: the job orchestrator's command-line client (spec: job-orchestrator.md,
// "Command-line client"). _tty decides on colour before citty and consola load (in the split
// build a static import would not be evaluated first), then the commands: service/_main.ts.
import "./_tty";

void import("./service/_main");
