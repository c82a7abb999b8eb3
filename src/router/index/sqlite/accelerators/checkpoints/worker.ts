// The background checkpointer's thread (checkpointer.ts): its own connection to the
// index file, running a PASSIVE checkpoint — the committed WAL pages copied into the database
// file, with the fsyncs synchronous = NORMAL makes — each time the writer asks.
import { Database } from "bun:sqlite";
import type { CheckpointReply, CheckpointRequest } from "./checkpointer";

declare const self: Worker;

let db: Database | undefined;
const reply = (r: CheckpointReply) => self.postMessage(r);

self.addEventListener("message", (event: MessageEvent<CheckpointRequest>) => {
  const msg = event.data;
  try {
    if (typeof msg === "object") {
      db = new Database(msg.open);
      db.run("PRAGMA synchronous = NORMAL");
      // PASSIVE never waits; this connection writes nothing, so it never checkpoints on its own.
      db.run("PRAGMA wal_autocheckpoint = 0");
    } else if (msg === "checkpoint") {
      db?.query("PRAGMA wal_checkpoint(PASSIVE)").get();
      reply("done");
    } else {
      db?.close();
      db = undefined;
      reply("closed");
    }
  } catch (err) {
    // The writer falls back to checkpointing in its own calls.
    reply({ failed: (err as Error).message });
  }
});
