// Migration files are imported as text (`with { type: "text" }`), so a compiled binary carries them.
declare module "*.sql" {
  const text: string;
  export default text;
}
