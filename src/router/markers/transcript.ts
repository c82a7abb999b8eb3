// Markers in a Claude Code transcript (~/.claude/projects/<cwd>/<session>.jsonl, one JSON
// entry per line): inline `<!-- @lesson … -->` blocks in the assistant's text and in what it
// wrote with the Write/Edit tools. Read from a byte offset to the last whole line, so each
// Stop reads only the turn it ends; each marker keeps its entry's timestamp and gets a key
// from the entry's uuid, so reading a line twice never records it twice.
import { open } from "node:fs/promises";
import { parseInlineMarkers } from "./inline";

export interface HarvestedMarker {
  type: string;
  content: string;
  attrs: Record<string, unknown>;
  idempotency_key: string;
}

interface Entry {
  type?: string;
  uuid?: string;
  timestamp?: string;
  sessionId?: string;
  message?: { role?: string; content?: unknown };
}

/** Texts an assistant entry wrote: its text blocks, and file contents given to Write/Edit/MultiEdit. */
function writtenTexts(entry: Entry): string[] {
  const content = entry.message?.content;
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const block of content as Array<Record<string, unknown>>) {
    if (block?.type === "text" && typeof block.text === "string") out.push(block.text);
    if (block?.type === "tool_use" && block.input && typeof block.input === "object") {
      const input = block.input as Record<string, unknown>;
      for (const k of ["content", "new_string"]) if (typeof input[k] === "string") out.push(input[k] as string);
      if (Array.isArray(input.edits))
        for (const e of input.edits as Array<Record<string, unknown>>) if (typeof e?.new_string === "string") out.push(e.new_string);
    }
  }
  return out;
}

export async function harvestTranscript(
  path: string,
  fromOffset: number,
  sessionId: string | undefined,
): Promise<{ markers: HarvestedMarker[]; offset: number }> {
  const file = await open(path, "r");
  try {
    const size = (await file.stat()).size;
    // A shorter file than the offset is a new transcript at the same path: read it whole.
    const start = fromOffset <= size ? fromOffset : 0;
    const buf = Buffer.alloc(size - start);
    await file.read(buf, 0, buf.length, start);
    const lastNewline = buf.lastIndexOf(0x0a);
    if (lastNewline < 0) return { markers: [], offset: start };
    const text = buf.subarray(0, lastNewline + 1).toString("utf8");
    const markers: HarvestedMarker[] = [];
    let lineOffset = start;
    for (const line of text.split("\n")) {
      const at = lineOffset;
      lineOffset += Buffer.byteLength(line) + 1;
      if (!line.includes("@")) continue;
      let entry: Entry;
      try {
        entry = JSON.parse(line) as Entry;
      } catch {
        continue;
      }
      if (entry.type !== "assistant") continue;
      const sid = sessionId ?? entry.sessionId;
      writtenTexts(entry).forEach((text, t) => {
        parseInlineMarkers(text).forEach((m, i) => {
          markers.push({
            type: m.type,
            content: m.content,
            attrs: {
              ...m.attrs,
              source: m.attrs.source ?? "claude-code",
              ...(sid ? { session_id: m.attrs.session_id ?? sid } : {}),
              ts: m.attrs.ts ?? entry.timestamp ?? new Date().toISOString(),
            },
            // The entry's uuid is unique across sessions (a resumed session keeps it): the key.
            idempotency_key: `claude-code:${entry.uuid ?? `${sid ?? "-"}@${at}`}:${t}:${i}`,
          });
        });
      });
    }
    return { markers, offset: start + lastNewline + 1 };
  } finally {
    await file.close();
  }
}
