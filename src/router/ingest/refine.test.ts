// The model's second opinion on a note, against the fixture gateway speaking the real wire format.
import { afterAll, describe, expect, it } from "bun:test";
import { startGateway } from "../../../test/fixtures/openai-gateway";
import { modelRefine } from "./refine";

let answer = "Lesson.";
const gw = startGateway({ apiKey: "sk-test", reply: () => answer });
afterAll(() => gw.stop());
const refine = modelRefine({ baseUrl: `${gw.url}/v1`, apiKey: "sk-test", model: "m", timeoutMs: 2000 });

describe("modelRefine", () => {
  it("takes the one kind the model names, whatever its case and punctuation", async () => {
    answer = " Decision! ";
    expect(await refine("We use one index per tenant.")).toBe("decision");
  });

  it("keeps the rules' answer (undefined) when the model names no kind", async () => {
    answer = "I think this is probably a note about caching.";
    expect(await refine("Caches need jitter.")).toBeUndefined();
  });

  it("asks for one word from the kinds and shows the model at most 4000 characters", async () => {
    answer = "note";
    const before = gw.requests.length;
    await refine(`${"a".repeat(5000)}`);
    const sent = gw.requests[before]!.body;
    expect(sent.messages[0].content).toContain("note, lesson, decision, signal, milestone");
    expect(sent.messages[1].content).toHaveLength(4000);
    expect(sent.max_tokens).toBe(3);
  });
});
