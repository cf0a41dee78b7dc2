/// <reference types="node" />
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Stylesheets as written, for tests of rules that matter to the layout: Vitest loads no CSS into
 * jsdom, and jsdom lays nothing out.
 */

/** The text of a stylesheet under `ui/src` (e.g. `styles.css`, `features/usage/usage.css`), its comments taken out. */
export function stylesheet(path: string): string {
  return readFileSync(join(__dirname, '..', path), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
}

/** The declarations of the rule for `selector` at the top of `css` (not indented: outside any media query). */
export function declarations(css: string, selector: string): Record<string, string> {
  const escaped = selector.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const rule = new RegExp(`^${escaped} \\{([^}]*)\\}`, 'm').exec(css);
  if (!rule) throw new Error(`no rule for ${selector}`);
  const pairs = rule[1].split(';').map((d) => d.split(':').map((part) => part.trim()));
  return Object.fromEntries(pairs.filter(([name, value]) => name && value));
}
