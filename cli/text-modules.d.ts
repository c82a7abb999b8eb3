// Files imported as text (`with { type: "text" }`), embedded into the compiled binaries.
declare module "*.yml" {
  const text: string;
  export default text;
}
declare module "*.yaml" {
  const text: string;
  export default text;
}
declare module "*.md" {
  const text: string;
  export default text;
}
