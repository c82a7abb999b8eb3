// service-cli update, offline: a copy of the compiled binary (and router-cli beside it) replaces
// itself from a checkout path, a git URL, a compiled binary, or an npm package served by a
// registry on loopback. The "new version" is a tiny checkout whose `bun run build` writes
// stand-in binaries that report 9.9.9.
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { gitSync } from "./fixtures/git-remote";
import { compiledClis } from "./support/cli";
import { tempDir } from "./support/main-process";
import { svc } from "./support/service-cli";

// Each test starts processes (servers, the compiled CLI): more room than bun's 5 s default.
setDefaultTimeout(30_000);

let cliDir = "";
let checkout = "";
let registry: ReturnType<typeof Bun.serve> | undefined;

const STANDIN = (name: string, version: string) => `#!/bin/sh\nif [ "$1" = version ]; then echo "${name} ${version}"; else echo "${version}"; fi\n`;

/** A checkout whose build writes stand-in binaries into --outdir. */
function makeCheckout(): string {
  const dir = tempDir("update-checkout");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "brain-stack", version: "9.9.9", private: true, scripts: { build: "bun build.ts" } }));
  writeFileSync(
    join(dir, "build.ts"),
    `import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
const out = process.argv[process.argv.indexOf("--outdir") + 1];
mkdirSync(out, { recursive: true });
for (const name of ["service-cli", "router-cli"]) {
  writeFileSync(out + "/" + name, ${JSON.stringify(STANDIN("NAME", "9.9.9"))}.replace("NAME", name));
  chmodSync(out + "/" + name, 0o755);
}
`,
  );
  gitSync(["init", "-q", "-b", "main"], dir);
  gitSync(["add", "."], dir);
  gitSync(["commit", "-q", "-m", "9.9.9"], dir);
  return dir;
}

/** A folder holding copies of the compiled service-cli and router-cli, as an install would. */
function installed(): { dir: string; bin: string } {
  const dir = tempDir("update-bin");
  for (const name of ["service-cli", "router-cli"]) {
    copyFileSync(join(cliDir, name), join(dir, name));
    chmodSync(join(dir, name), 0o755);
  }
  return { dir, bin: join(dir, "service-cli") };
}

const env = () => ({ HOME: tempDir("update-home"), PATH: `${process.env.PATH}` });
const versionOf = async (binary: string) => new TextDecoder().decode(Bun.spawnSync([binary, "version"]).stdout).trim();
const update = (bin: string, ...args: string[]) => {
  const proc = Bun.spawn([bin, "update", ...args], { env: { ...env(), NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe", cwd: tempDir("update-cwd") });
  return Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]).then(([code, stdout, stderr]) => ({
    code,
    stdout,
    stderr,
  }));
};

beforeAll(async () => {
  cliDir = await compiledClis();
  checkout = makeCheckout();
}, 120_000);

afterAll(() => registry?.stop(true));

describe("update", () => {
  it("from a checkout path: builds it and replaces service-cli and router-cli beside it", async () => {
    const { dir, bin } = installed();
    expect(await versionOf(bin)).toBe(`service-cli ${pkg.version}`);
    const r = await update(bin, "--source", checkout);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain(`service-cli ${pkg.version} → 9.9.9`);
    expect(await versionOf(bin)).toBe("service-cli 9.9.9");
    expect(await versionOf(join(dir, "router-cli"))).toBe("router-cli 9.9.9");
  });

  it("from a git URL: clones, builds, replaces", async () => {
    const { bin } = installed();
    const r = await update(bin, "--source", `file://${checkout}`);
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).toContain("cloning");
    expect(await versionOf(bin)).toBe("service-cli 9.9.9");
  });

  it("from a compiled binary's path; the same binary again is already up to date", async () => {
    const { bin } = installed();
    const other = join(tempDir("standin"), "service-cli");
    writeFileSync(other, STANDIN("service-cli", "9.9.8"));
    const same = await update(bin, "--source", join(cliDir, "service-cli"));
    expect(same.code).toBe(0);
    expect(same.stdout + same.stderr).toContain(`service-cli is up to date (${pkg.version}`);
    const r = await update(bin, "--source", other);
    expect(r.code).toBe(0);
    expect(await versionOf(bin)).toBe("service-cli 9.9.8");
  });

  it("from an npm package (the registry in NPM_CONFIG_REGISTRY): the tarball's dist/service-cli", async () => {
    const pack = tempDir("npm-pack");
    mkdirSync(join(pack, "package", "dist"), { recursive: true });
    writeFileSync(join(pack, "package", "package.json"), JSON.stringify({ name: "brain-stack", version: "9.9.7" }));
    writeFileSync(join(pack, "package", "dist", "service-cli"), STANDIN("service-cli", "9.9.7"));
    chmodSync(join(pack, "package", "dist", "service-cli"), 0o755);
    const tar = Bun.spawnSync(["tar", "-czf", join(pack, "brain-stack-9.9.7.tgz"), "-C", pack, "package"]);
    expect(tar.exitCode).toBe(0);
    const tgz = readFileSync(join(pack, "brain-stack-9.9.7.tgz"));
    const requests: string[] = [];
    registry = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const path = new URL(req.url).pathname;
        requests.push(path);
        if (path === "/brain-stack/latest")
          return Response.json({
            name: "brain-stack",
            version: "9.9.7",
            dist: { tarball: `http://127.0.0.1:${registry!.port}/brain-stack/-/brain-stack-9.9.7.tgz` },
          });
        if (path === "/brain-stack/-/brain-stack-9.9.7.tgz") return new Response(tgz);
        return Response.json({ error: "Not found" }, { status: 404 });
      },
    });
    const { bin } = installed();
    const proc = Bun.spawn([bin, "update"], { env: { ...env(), NPM_CONFIG_REGISTRY: `http://127.0.0.1:${registry.port}` }, stdout: "pipe", stderr: "pipe" });
    const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code).toBe(0);
    expect(requests).toEqual(["/brain-stack/latest", "/brain-stack/-/brain-stack-9.9.7.tgz"]);
    expect(await versionOf(bin)).toBe("service-cli 9.9.7");
    expect(err).toBe("");

    // Spawned, not spawnSync: the registry answers from this process.
    const missing = Bun.spawn([installed().bin, "update", "--source", "no-such-package"], {
      env: { ...env(), NPM_CONFIG_REGISTRY: `http://127.0.0.1:${registry.port}` },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [missingCode, missingErr] = await Promise.all([missing.exited, new Response(missing.stderr).text()]);
    expect(missingCode).toBe(1);
    expect(missingErr).toContain("has no no-such-package@latest");
  });

  it("a missing path is invalid input (exit 2) and leaves the binary alone", async () => {
    const { bin } = installed();
    const r = await svc(["update", "--source", "./no/such/checkout"], env());
    expect(r.code).toBe(2);
    const own = await update(bin, "--source", "./no/such/checkout");
    expect(own.code).toBe(2);
    expect(await versionOf(bin)).toBe(`service-cli ${pkg.version}`);
  });

  it("a build that fails is exit 1 and leaves the binary alone", async () => {
    const broken = tempDir("broken-checkout");
    writeFileSync(join(broken, "package.json"), JSON.stringify({ name: "brain-stack", scripts: { build: "exit 3" } }));
    const { bin } = installed();
    const r = await update(bin, "--source", broken);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("bun run build failed");
    expect(await versionOf(bin)).toBe(`service-cli ${pkg.version}`);
  });
});
