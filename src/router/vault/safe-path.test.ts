import { describe, expect, it } from "bun:test";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PathEscapeError, safeVaultPath } from "./safe-path";

const setup = () => {
  const base = mkdtempSync(join(tmpdir(), "safe-"));
  const vault = join(base, "vault");
  const outside = join(base, "outside");
  mkdirSync(join(vault, "raw"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.md"), "secret");
  symlinkSync(outside, join(vault, "raw", "link-out"));
  symlinkSync(join(outside, "secret.md"), join(vault, "raw", "file-out.md"));
  mkdirSync(join(vault, "real"));
  symlinkSync(join(vault, "real"), join(vault, "raw", "link-in"));
  return { vault, outside };
};

describe("safeVaultPath", () => {
  it("resolves ordinary paths, existing or not, inside the vault", async () => {
    const { vault } = setup();
    expect(await safeVaultPath(vault, "raw/new/note.md")).toEndWith("/vault/raw/new/note.md");
    expect(await safeVaultPath(vault, "raw/./a/../b.md")).toEndWith("/vault/raw/b.md");
  });

  for (const [name, path] of [
    ["../", "../outside/secret.md"],
    ["nested ../", "raw/../../outside/secret.md"],
    ["an absolute path", "/etc/passwd"],
    ["a NUL byte", "raw/a\0.md"],
    ["a backslash climb", "raw\\..\\..\\outside"],
    ["a symlinked folder out", "raw/link-out/secret.md"],
    ["a symlinked folder out (new file)", "raw/link-out/new.md"],
    ["a symlinked file out", "raw/file-out.md"],
    ["empty", ""],
  ] as const) {
    it(`refuses ${name}`, async () => {
      const { vault } = setup();
      await expect(safeVaultPath(vault, path)).rejects.toBeInstanceOf(PathEscapeError);
    });
  }

  it("allows a symlink that stays inside the vault", async () => {
    const { vault } = setup();
    expect(await safeVaultPath(vault, "raw/link-in/x.md")).toEndWith("/vault/raw/link-in/x.md");
  });
});
