/** KiCad files imported as text (`with { type: "text" }`), embedded in the compiled binary. */
declare module "*.kicad_pro" {
  const text: string;
  export default text;
}
declare module "*.kicad_sch" {
  const text: string;
  export default text;
}
declare module "*.kicad_pcb" {
  const text: string;
  export default text;
}
/** WebAssembly modules imported as files (`with { type: "file" }`): a path, embedded in the compiled binary. */
declare module "*.wasm" {
  const path: string;
  export default path;
}
/** Python programs run under KiCad's Python (`with { type: "text" }`), embedded in the compiled binary. */
declare module "*.py" {
  const text: string;
  export default text;
}
