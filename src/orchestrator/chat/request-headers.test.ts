import { describe, expect, it } from "bun:test";
import { completionRequest, correlationIdOf } from "./request-headers";

const headers = (h: Record<string, string>) => (name: string) => h[name];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("completionRequest (POST /completions)", () => {
  it("continues the conversation the body names and ignores conversation headers", () => {
    const { conversationId, request } = completionRequest(
      { message: "hi", conversation_id: "conv-7" },
      headers({ "x-conversation-id": "other", "x-openwebui-chat-id": "owui", "x-caller-agent": "ops" }),
    );
    expect(conversationId).toBe("conv-7");
    expect(request.metadata).toEqual({ conversation_id: "conv-7" });
    expect(request.header("x-conversation-id")).toBeUndefined();
    expect(request.header("x-openwebui-chat-id")).toBeUndefined();
    expect(request.header("x-caller-agent")).toBe("ops");
    expect(request.messages).toEqual([{ role: "user", content: "hi" }]);
  });

  it("starts a new conversation for each message that names none", () => {
    const a = completionRequest({ message: "hi" }, headers({}));
    const b = completionRequest({ message: "hi" }, headers({}));
    expect(a.conversationId).toMatch(UUID);
    expect(b.conversationId).not.toBe(a.conversationId);
  });

  it("takes the body's user for X-User-Id, else the header's", () => {
    expect(completionRequest({ message: "hi", user: "ana" }, headers({ "x-user-id": "bob" })).request.header("x-user-id")).toBe("ana");
    expect(completionRequest({ message: "hi" }, headers({ "x-user-id": "bob" })).request.header("x-user-id")).toBe("bob");
  });
});

describe("correlationIdOf", () => {
  it("keeps a client's plausible X-Correlation-Id", () => {
    expect(correlationIdOf(headers({ "x-correlation-id": "run-42:step.1" }))).toBe("run-42:step.1");
  });

  it("replaces a missing or implausible one with a new UUID", () => {
    expect(correlationIdOf(headers({}))).toMatch(UUID);
    expect(correlationIdOf(headers({ "x-correlation-id": "bad id\nwith a line break" }))).toMatch(UUID);
    expect(correlationIdOf(headers({ "x-correlation-id": "x".repeat(129) }))).toMatch(UUID);
  });

  it("gives a streaming turn none", () => {
    expect(correlationIdOf(headers({ "x-correlation-id": "run-42" }), { stream: true })).toBeUndefined();
  });
});
