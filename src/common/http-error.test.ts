import { describe, expect, it } from "bun:test";
import { DomainError } from "./domain-error";
import { HttpError, httpErrorOf } from "./http-error";
import { toolErrorOf } from "./mcp/tool-error";

describe("the edges' mapping of domain errors", () => {
  it("answers HTTP with the kind's status, the code, the message and the details", () => {
    const err = new DomainError("invalid", "invalid_request", "content is empty", { details: [{ path: "content", message: "empty" }] });
    expect(httpErrorOf(err)).toMatchObject({
      status: 400,
      code: "invalid_request",
      message: "content is empty",
      details: [{ path: "content", message: "empty" }],
    });
    expect(httpErrorOf(new DomainError("not_found", "job_not_found", "no job x"))?.status).toBe(404);
    expect(httpErrorOf(new DomainError("conflict", "job_finished", "done"))?.status).toBe(409);
    expect(httpErrorOf(new DomainError("too_large", "content_too_large", "big"))?.status).toBe(413);
    expect(httpErrorOf(new DomainError("upstream", "gateway_error", "broke"))?.status).toBe(502);
    expect(httpErrorOf(new DomainError("timeout", "gateway_timeout", "slow"))?.status).toBe(504);
  });

  it("turns a retry hint into Retry-After, and sends none without one", () => {
    expect(httpErrorOf(new DomainError("busy", "conversation_busy", "a turn runs", { retryAfterSeconds: 2 }))).toMatchObject({
      status: 429,
      headers: { "Retry-After": "2" },
    });
    expect(httpErrorOf(new DomainError("unavailable", "shutting_down", "stopping"))).toMatchObject({ status: 503, headers: undefined });
  });

  it("leaves an edge's own HttpError as it is and anything else to the 500 handler", () => {
    const edge = new HttpError(401, "unauthorized", "invalid bearer token");
    expect(httpErrorOf(edge)).toBe(edge);
    expect(httpErrorOf(new Error("boom"))).toBeUndefined();
  });

  it("answers MCP with a tool error naming the code and message, and leaves other errors to the server", () => {
    expect(toolErrorOf(new DomainError("not_found", "note_not_found", "no note a.md"))).toEqual({
      isError: true,
      content: [{ type: "text", text: "note_not_found: no note a.md" }],
    });
    expect(toolErrorOf(new Error("boom"))).toBeUndefined();
  });

  it("tells the caller's faults from the service's", () => {
    expect(new DomainError("invalid", "x", "m").callersFault).toBe(true);
    expect(new DomainError("not_found", "x", "m").callersFault).toBe(true);
    expect(new DomainError("upstream", "x", "m").callersFault).toBe(false);
    expect(new DomainError("unavailable", "x", "m").callersFault).toBe(false);
  });
});
