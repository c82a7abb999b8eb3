import { describe, expect, it } from "bun:test";
import { buildAgentArgv } from "./argv";

describe("buildAgentArgv", () => {
  it("builds the job command line from a profile", () => {
    const { argv, stdin } = buildAgentArgv({
      prompt: "fix the flaky test",
      model: "sonnet",
      maxTurns: 80,
      permissionMode: "bypassPermissions",
      sessionId: "0b7e2a44-9c1d-4f7e-8a55-3c2d1e0f9a88",
      appendSystemPrompt: "Be brief.",
      allowedTools: ["Read", "Bash(git diff:*)"],
    });
    expect(stdin).toBeUndefined();
    expect(argv).toEqual([
      "-p",
      "fix the flaky test",
      "--output-format",
      "stream-json",
      "--verbose",
      "--model",
      "sonnet",
      "--max-turns",
      "80",
      "--permission-mode",
      "bypassPermissions",
      "--session-id",
      "0b7e2a44-9c1d-4f7e-8a55-3c2d1e0f9a88",
      "--append-system-prompt",
      "Be brief.",
      "--allowedTools",
      "Read,Bash(git diff:*)",
    ]);
  });

  it("resumes instead of starting a session, and streams partial messages for chat", () => {
    const { argv } = buildAgentArgv({ prompt: "next", resume: "abc", sessionId: "ignored", includePartialMessages: true, systemPrompt: "You are X." });
    expect(argv).toContain("--include-partial-messages");
    expect(argv.slice(argv.indexOf("--resume"), argv.indexOf("--resume") + 2)).toEqual(["--resume", "abc"]);
    expect(argv).not.toContain("--session-id");
    expect(argv).toContain("--system-prompt");
  });

  it("moves a prompt that could be read as a flag, or is too long for argv, to stdin", () => {
    expect(buildAgentArgv({ prompt: "--version please" })).toEqual({ argv: ["-p", "--output-format", "stream-json", "--verbose"], stdin: "--version please" });
    const long = "x".repeat(200 * 1024);
    expect(buildAgentArgv({ prompt: long }).stdin).toBe(long);
  });
});
