// Voice in team chat, end to end over loopback (issue 9 part 7): a voice note posted to the
// fixture bot platform is fetched with the bot's token, sent through the fixture voice backend's
// /stt, and its transcript is what the agent answers; the answer is spoken back through /speak
// when the user asked for voice (a voice note, or /voice in a typed message). Quota and billing
// refusals and timeouts reach the user; nothing falls back silently.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "bun:test";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { REPLIES } from "../src/orchestrator/teamchat/bot";
import { type BotPlatform, startBotPlatform } from "./fixtures/bot-platform";
import { OGG_SPEECH, parseWav, startVoiceBackend, type VoiceBackend } from "./fixtures/voice-backend";
import { makeHub, recordedStarts, tempHome } from "./support/agent-mode";
import { startTeamChatServer, type TeamChatServer } from "./support/teamchat";

let t: Awaited<ReturnType<typeof tempHome>>;
let hubUrl: string;
let platform: BotPlatform;
let voice: VoiceBackend;
let s: TeamChatServer;
const agentEnv: Record<string, string | undefined> = {};
let record = "";
const ANSWER = "Hello! The build passes on main.";
const NOTE = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0x00, 0x02, 42, 42, 42, 42]);

beforeAll(async () => {
  t = await tempHome("teamchat-voice-");
  hubUrl = await makeHub(join(t.home, "hub"));
  platform = await startBotPlatform();
  voice = startVoiceBackend({ apiKey: "voice-key" });
  s = await startTeamChatServer({ home: t.home, hubUrl, platform, agentEnv, voiceUrl: voice.url, configEnv: { VOICE_TIMEOUT_SECONDS: "1" } });
});

afterAll(async () => {
  await s.close();
  platform.stop();
  voice.stop();
  await t.cleanup();
});

beforeEach(async () => {
  // The previous test's background work (a spoken reply still on its way to /speak) must not
  // take this test's forced voice-backend failure.
  await s.teamChat.bot.idle();
  record = join(t.home, `record-${crypto.randomUUID()}.jsonl`);
  for (const k of Object.keys(agentEnv)) delete agentEnv[k];
  Object.assign(agentEnv, { PATH: process.env.PATH, FAKE_CLAUDE_SCENARIO: "text-only", FAKE_CLAUDE_RECORD: record });
  voice.requests.length = 0;
  voice.delayMs = 0;
  voice.transcript = "what failed on main";
});

async function voiceNote(bytes: Uint8Array, contentType = "audio/ogg", name = "voice-note.ogg", text = "") {
  const contentUrl = platform.addAttachment(`${crypto.randomUUID()}-${name}`, bytes, contentType);
  const activity = platform.activity({ text, attachments: [{ contentType, contentUrl, name }] });
  expect((await s.post(activity, await platform.sign())).status).toBe(202);
  return activity.conversation.id as string;
}

async function typed(text: string) {
  const activity = platform.activity({ text });
  expect((await s.post(activity, await platform.sign())).status).toBe(202);
  return activity.conversation.id as string;
}

describe("a voice note in", () => {
  it("goes through /stt (multipart `audio`, its type, the voice key), the agent answers the transcript, and the answer is spoken back", async () => {
    const conv = await voiceNote(NOTE);
    const msgs = await platform.waitForMessages(3, conv);
    expect(msgs.slice(0, 2).map((m) => m.text)).toEqual(["**Heard:** what failed on main", ANSWER]);

    const stt = voice.requests.find((r) => r.path === "/stt")!;
    expect(stt.authorization).toBe("Bearer voice-key");
    expect(stt.parts.map((p) => [p.field, p.type, p.filename])).toEqual([["audio", "audio/ogg", "voice-note.ogg"]]);
    expect([...stt.parts[0]!.bytes]).toEqual([...NOTE]);
    expect((await recordedStarts(record))[0]!.argv[1]).toBe("what failed on main");

    const speak = voice.requests.find((r) => r.path === "/speak")!;
    expect(speak.json).toEqual({ text: ANSWER, voice: { output_format: "ogg" }, store: false });
    const spoken = msgs[2]!;
    expect(spoken.attachments).toHaveLength(1);
    expect(spoken.attachments[0].contentType).toBe("audio/ogg");
    expect(spoken.attachments[0].name).toBe("reply.ogg");
    expect(spoken.attachments[0].contentUrl).toBe(`data:audio/ogg;base64,${Buffer.from(OGG_SPEECH).toString("base64")}`);
  });

  it("an audio file shared as a Teams file (a pre-authorised download link) goes through /stt, fetched without the bot's token", async () => {
    const name = `${crypto.randomUUID()}-memo.m4a`;
    const downloadUrl = platform.addDownload(name, NOTE, "application/octet-stream");
    const activity = platform.activity({
      text: "",
      attachments: [
        { contentType: "application/vnd.microsoft.teams.file.download.info", name: "memo.m4a", content: { downloadUrl, uniqueId: "f1", fileType: "m4a" } },
      ],
    });
    expect((await s.post(activity, await platform.sign())).status).toBe(202);
    const msgs = await platform.waitForMessages(2, activity.conversation.id);
    expect(msgs.map((m) => m.text)).toEqual(["**Heard:** what failed on main", ANSWER]);
    expect(platform.downloads.filter((d) => d.name === name)).toEqual([{ name, authorization: null }]);
    const stt = voice.requests.find((r) => r.path === "/stt")!;
    expect(stt.parts.map((p) => [p.field, p.type, p.filename])).toEqual([["audio", "audio/mp4", "memo.m4a"]]);
    expect([...stt.parts[0]!.bytes]).toEqual([...NOTE]);
  });

  it("a voice note linked on a host that is not the platform's never gets the bot's token (and plain http there is refused)", async () => {
    const name = `${crypto.randomUUID()}-elsewhere.ogg`;
    // The same fixture server under a host name that is not in TEAMCHAT_ALLOWED_SERVICE_HOSTS.
    const contentUrl = platform.addDownload(name, NOTE, "audio/ogg").replace("127.0.0.1", "localhost");
    const activity = platform.activity({ text: "", attachments: [{ contentType: "audio/ogg", contentUrl, name: "elsewhere.ogg" }] });
    expect((await s.post(activity, await platform.sign())).status).toBe(202);
    const [m] = await platform.waitForMessages(1, activity.conversation.id);
    expect(m!.text).toStartWith("**Error:** the voice note's link http://localhost:");
    expect(m!.text).toEndWith("is not https. The voice note was not transcribed.");
    await s.teamChat.bot.idle();
    expect(platform.downloads.filter((d) => d.name === name)).toEqual([]);
    expect(voice.requests).toEqual([]);
    expect(await recordedStarts(record)).toHaveLength(0);
  });

  it("a quota or billing refusal of /stt reaches the user, and no turn starts", async () => {
    voice.failNext({ status: 402, body: { detail: "Payment required: your plan is out of credits" } });
    const conv = await voiceNote(NOTE);
    const [m] = await platform.waitForMessages(1, conv);
    expect(m!.text).toBe(
      '**Error:** the voice service\'s quota or billing limit is reached (HTTP 402: {"detail":"Payment required: your plan is out of credits"}). The voice note was not transcribed.',
    );
    await s.teamChat.bot.idle();
    expect(await recordedStarts(record)).toHaveLength(0);
    expect(platform.messages(conv)).toHaveLength(1);
  });

  it("a voice backend that does not answer within VOICE_TIMEOUT_SECONDS is reported, not waited on for ever", async () => {
    voice.delayMs = 2_500;
    const conv = await voiceNote(NOTE);
    const [m] = await platform.waitForMessages(1, conv, 5_000);
    expect(m!.text).toBe("**Error:** the voice service did not answer /stt within 1 s. The voice note was not transcribed.");
    expect(await recordedStarts(record)).toHaveLength(0);
  });

  it("other voice backend errors are reported with their status", async () => {
    voice.failNext({ status: 503, body: { detail: "model loading" } });
    const conv = await voiceNote(NOTE);
    const [m] = await platform.waitForMessages(1, conv);
    expect(m!.text).toStartWith("**Error:** the voice service answered /stt with HTTP 503");
  });

  const espeak = Bun.which("espeak-ng");
  if (!espeak && process.env.CI === "true") throw new Error("espeak-ng is not installed and CI=true: install it (apt-get install espeak-ng)");
  if (!espeak) console.warn("⚠ espeak-ng is not installed: skipping the real-audio team-chat test (apt-get install espeak-ng)");

  it.skipIf(!espeak)("a real WAV voice note spoken by espeak-ng reaches /stt intact", async () => {
    const file = join(t.home, "spoken.wav");
    expect(await Bun.spawn([espeak!, "-w", file, "Why did the deploy fail?"], { stdout: "ignore", stderr: "ignore" }).exited).toBe(0);
    const bytes = new Uint8Array(await readFile(file));
    voice.transcript = (audio) => (parseWav(audio.bytes) ? "why did the deploy fail" : "not a WAV file");
    const conv = await voiceNote(bytes, "audio/wav", "spoken.wav");
    // Heard, the answer, the spoken answer.
    const msgs = await platform.waitForMessages(3, conv);
    expect(msgs[0]!.text).toBe("**Heard:** why did the deploy fail");
    const part = voice.requests.find((r) => r.path === "/stt")!.parts[0]!;
    expect([part.field, part.type, part.filename]).toEqual(["audio", "audio/wav", "spoken.wav"]);
    expect(Buffer.from(part.bytes).equals(Buffer.from(bytes))).toBe(true);
    expect(parseWav(part.bytes)!.seconds).toBeGreaterThan(0.5);
  });
});

describe("a spoken reply", () => {
  it("is sent after the text answer when the typed message asks with /voice (no /stt)", async () => {
    const conv = await typed("/voice What failed?");
    const msgs = await platform.waitForMessages(2, conv);
    expect(msgs[0]!.text).toBe(ANSWER);
    expect(msgs[1]!.attachments[0].contentType).toBe("audio/ogg");
    expect(voice.requests.map((r) => r.path)).toEqual(["/speak"]);
    expect((await recordedStarts(record))[0]!.argv[1]).toBe("What failed?");
  });

  it("is not sent for a plain typed message", async () => {
    const conv = await typed("What failed?");
    await platform.waitForMessages(1, conv);
    await s.teamChat.bot.idle();
    expect(platform.messages(conv)).toHaveLength(1);
    expect(voice.requests).toHaveLength(0);
  });

  it("a quota refusal of /speak is reported after the text answer", async () => {
    voice.failNext({ status: 429, body: { error: { type: "insufficient_quota", message: "You exceeded your current quota" } } });
    const conv = await typed("/voice What failed?");
    const msgs = await platform.waitForMessages(2, conv);
    expect(msgs[0]!.text).toBe(ANSWER);
    expect(msgs[1]!.text).toStartWith("**Error:** the voice service's quota or billing limit is reached (HTTP 429");
    expect(msgs[1]!.text).toEndWith("The answer above was not spoken.");
  });
});

describe("without a voice service", () => {
  it("a voice note gets a reply saying voice is not configured, and no turn", async () => {
    const h = await tempHome("teamchat-novoice-");
    const server = await startTeamChatServer({ home: h.home, hubUrl, platform, agentEnv });
    try {
      const contentUrl = platform.addAttachment("n.ogg", NOTE, "audio/ogg");
      const activity = platform.activity({ text: "", attachments: [{ contentType: "audio/ogg", contentUrl }] });
      expect((await server.post(activity, await platform.sign())).status).toBe(202);
      const [m] = await platform.waitForMessages(1, activity.conversation.id);
      expect(m!.text).toBe(REPLIES.noVoice);
      expect(await recordedStarts(record)).toHaveLength(0);
    } finally {
      await server.close();
      await h.cleanup();
    }
  });
});
