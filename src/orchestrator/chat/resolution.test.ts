import { describe, expect, it } from "bun:test";
import { contentHash, conversationKey, type ResolutionInput, resolveConversation } from "./resolution";

const base = (over: Partial<ResolutionInput> & { headers?: Record<string, string> } = {}): ResolutionInput => ({
  agentId: "helper",
  header: (name) => over.headers?.[name],
  system: "",
  firstUserMessage: "hello",
  hashFallback: true,
  ...over,
});

describe("resolveConversation", () => {
  it("composes conv:{agent_id}:{user_hint}:{key}, escaping ':' inside a segment", () => {
    expect(conversationKey("helper", "a:b", "c d")).toBe("conv:helper:a%3Ab:c%20d");
  });

  it("the same conversation id sent to two agents is two keys", () => {
    const headers = { "x-conversation-id": "c1" };
    expect(resolveConversation(base({ headers })).convKey).toBe("conv:helper:anonymous:c1");
    expect(resolveConversation(base({ headers, agentId: "other" })).convKey).toBe("conv:other:anonymous:c1");
  });

  it("tier 2 prefers metadata.conversation_id over a UUID-shaped user", () => {
    const r = resolveConversation(base({ metadata: { conversation_id: "m1" }, user: "0194a3b2-6c1e-7f00-8a3b-1c2d3e4f5a6b" }));
    expect(r).toMatchObject({ tier: "body", key: "m1", userHint: "anonymous" });
  });

  it("tier 3 hashes system + first user message to 16 hex characters", () => {
    const r = resolveConversation(base({ system: "sys", firstUserMessage: "first" }));
    expect(r).toMatchObject({ tier: "content_hash", key: contentHash("sys", "first"), stateless: false });
    expect(r.key).toMatch(/^[0-9a-f]{16}$/);
    expect(contentHash("sys", "first")).not.toBe(contentHash("sy", "sfirst"));
  });

  it("tier 4 when the hash fallback is off: a random key, stateless", () => {
    const a = resolveConversation(base({ hashFallback: false }));
    const b = resolveConversation(base({ hashFallback: false }));
    expect(a.tier).toBe("ephemeral");
    expect(a.stateless).toBe(true);
    expect(a.key).not.toBe(b.key);
  });
});
