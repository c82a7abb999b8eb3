// bun test preload: keep in-process service logs quiet unless LOG_LEVEL asks for them.
import { setLogLevel } from "../src/common/logger";

setLogLevel(Number(process.env.LOG_LEVEL ?? 1));
