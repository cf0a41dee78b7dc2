/**
 * Draws the page's Latin text in `families`, in order, where the window chose them
 * (`FirstScreen.fonts`: on Linux, the desktops' UI fonts this machine has). WebKitGTK looks up
 * each family of a list in turn until one is found, once for each font the page uses, and a
 * family the machine lacks costs the first paint a fontconfig lookup; the window knows which are
 * installed. With none of them, the generic sans-serif; without a choice (Windows, macOS, a
 * browser), the stylesheet's own list stands.
 */
export function applyChosenFonts(root: HTMLElement, families: readonly string[] | null | undefined) {
  if (!families) return;
  const list = families.length > 0 ? families.map(quoted).join(', ') : 'sans-serif';
  root.style.setProperty('--font-latin', list);
}

/** A family name as a CSS string. */
function quoted(family: string): string {
  return `'${family.replace(/['\\\n]/g, (c) => (c === '\n' ? ' ' : `\\${c}`))}'`;
}
