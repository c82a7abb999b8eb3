// Markdown files imported as text (`import guide from "./x.md" with { type: "text" }`): Bun
// inlines them, in `bun src/main.ts` and in a compiled binary alike.
declare module "*.md" {
  const text: string;
  export default text;
}
