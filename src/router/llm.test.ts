import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { type Gateway, startGateway } from "../../test/fixtures/openai-gateway";
import { type HttpError, httpErrorOf } from "../common/http-error";
import { chat, chatBaseUrl, chatStream, embed, embeddingsRoute } from "./llm";

let gw: Gateway;
beforeAll(() => {
  gw = startGateway({ apiKey: "sk-test", dim: 16 });
});
afterAll(() => gw.stop());

const ep = () => ({ baseUrl: `${gw.url}/v1`, apiKey: "sk-test", model: "m", timeoutMs: 2000 });
const collect = async (it: AsyncIterable<string>) => {
  let s = "";
  for await (const d of it) s += d;
  return s;
};
const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    // As the HTTP edge answers it: the status a client of /brief or /search sees.
    const answer = httpErrorOf(e);
    if (!answer) throw e;
    return answer as HttpError;
  }
  throw new Error("expected a failure");
};

describe("gateway URLs", () => {
  it("uses LLM_API_BASE as given and adds /v1 to INFERENCE_URL", () => {
    expect(chatBaseUrl({ llmApiBase: "https://gw/v1/" })).toBe("https://gw/v1");
    expect(chatBaseUrl({ inferenceUrl: "http://ollama:11434" })).toBe("http://ollama:11434/v1");
    expect(chatBaseUrl({})).toBeUndefined();
    expect(embeddingsRoute("http://e:8080")).toBe("http://e:8080/v1/embeddings");
    expect(embeddingsRoute("http://e:8080/v1")).toBe("http://e:8080/v1/embeddings");
    expect(embeddingsRoute("http://e/v1/embeddings")).toBe("http://e/v1/embeddings");
  });
});

describe("chat", () => {
  it("returns the completion text and sends the key", async () => {
    const r = await chat(ep(), [{ role: "user", content: "hi" }]);
    expect(r.text).toContain("[1]");
    expect(gw.requests.at(-1)?.authorization).toBe("Bearer sk-test");
  });

  it("streams the same text delta by delta", async () => {
    const streamed = await collect(chatStream(ep(), [{ role: "user", content: "hi" }]));
    expect(streamed).toBe((await chat(ep(), [{ role: "user", content: "hi" }])).text);
    expect(gw.requests.at(-2)?.body.stream).toBe(true);
  });

  it("maps a rejected key to 502 naming the gateway's 401", async () => {
    const e = await failure(chat({ ...ep(), apiKey: "wrong" }, [{ role: "user", content: "x" }]));
    expect(e.status).toBe(502);
    expect(e.message).toContain("answered 401");
  });

  it("maps a gateway 500 to 502, streaming too", async () => {
    gw.failWith(500);
    try {
      expect((await failure(chat(ep(), []))).status).toBe(502);
      expect((await failure(collect(chatStream(ep(), [])))).message).toContain("answered 500");
    } finally {
      gw.failWith(0);
    }
  });

  it("maps a slow gateway to 504 within the timeout, never a hang", async () => {
    gw.delay(1500);
    try {
      const started = performance.now();
      const e = await failure(chat({ ...ep(), timeoutMs: 200 }, []));
      expect(e.status).toBe(504);
      expect(performance.now() - started).toBeLessThan(1200);
      expect((await failure(collect(chatStream({ ...ep(), timeoutMs: 200 }, [])))).status).toBe(504);
    } finally {
      gw.delay(0);
    }
  });

  it("maps an unreachable gateway to 502", async () => {
    const e = await failure(chat({ ...ep(), baseUrl: "http://127.0.0.1:1/v1" }, []));
    expect(e.status).toBe(502);
    expect(e.code).toBe("gateway_unreachable");
  });
});

describe("embed", () => {
  it("returns one vector per input, in input order", async () => {
    const v = await embed({ url: gw.url, apiKey: "sk-test", model: "e", dim: 16, timeoutMs: 2000 }, ["alpha beta", "gamma"]);
    expect(v).toHaveLength(2);
    expect(v[0]).toHaveLength(16);
    expect(v[0]).not.toEqual(v[1]);
  });

  it("refuses vectors of another dimension than EMBEDDINGS_DIM", async () => {
    const e = await failure(embed({ url: gw.url, apiKey: "sk-test", model: "e", dim: 32, timeoutMs: 2000 }, ["x"]));
    expect(e.code).toBe("embedding_dimension_mismatch");
  });
});
