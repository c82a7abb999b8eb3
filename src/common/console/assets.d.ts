// The console's static files, imported as text so `bun build --compile` embeds them in the binaries.
declare module "*.client.js" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
