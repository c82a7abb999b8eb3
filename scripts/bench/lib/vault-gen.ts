// Moved to test/support/vault-gen.ts (shared with the suites); kept for scale.ts and the SQLite index tests (other branches this session) until they import that.
export * from "../../../test/support/vault-gen.ts";
