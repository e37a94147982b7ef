/**
 * The built-in demo: the usb-led board and two recorded sessions, embedded in the executable
 * as text so `copperhead demo` needs nothing but KiCad and git — no checkout, no key.
 */
import addCapacitor from "../../fixtures/sessions/add-decoupling-cap.json" with { type: "json" };
import removePullDown from "../../fixtures/sessions/remove-cc-pulldown.json" with { type: "json" };
import pcb from "../../fixtures/usb-led/usb-led.kicad_pcb" with { type: "text" };
import pro from "../../fixtures/usb-led/usb-led.kicad_pro" with { type: "text" };
import root from "../../fixtures/usb-led/usb-led.kicad_sch" with { type: "text" };
import regulator from "../../fixtures/usb-led/regulator.kicad_sch" with { type: "text" };

export const DEMO_PROJECT = "usb-led";

/** File name → contents of the demo board's KiCad project. */
export const DEMO_BOARD: Readonly<Record<string, string>> = {
  "usb-led.kicad_pro": pro,
  "usb-led.kicad_sch": root,
  "regulator.kicad_sch": regulator,
  "usb-led.kicad_pcb": pcb,
};

export interface DemoScenario {
  name: string;
  request: string;
  /** What the run is expected to end as; the demo says so when it does not. */
  expect: "committed" | "rolled_back";
  session: unknown;
}

export const DEMO_SCENARIOS: readonly DemoScenario[] = [
  {
    name: "add-decoupling-cap",
    request: "Add a 100 nF decoupling capacitor on the LDO output",
    expect: "committed",
    session: addCapacitor,
  },
  {
    name: "remove-cc-pulldown",
    request: "Remove the CC2 pull-down resistor R2",
    expect: "rolled_back",
    session: removePullDown,
  },
];
