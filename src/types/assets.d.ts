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
