import { Fragment, jsx, jsxs } from 'react/jsx-runtime';
import type { ReactNode } from 'react';
import { toJsxRuntime } from 'hast-util-to-jsx-runtime';
import { common, createLowlight } from 'lowlight';

/*
 * Syntax highlighting with lowlight (highlight.js grammars, synchronous, giving a syntax tree
 * that becomes React elements: no HTML string is ever set). The 37 common languages only; a
 * block in another language, or with none named, stays plain: guessing a language runs every
 * grammar over the code.
 */
const lowlight = createLowlight(common);

/** The code as highlighted elements; null when the language is not one we highlight. */
export function highlighted(language: string, code: string): ReactNode | null {
  const name = language.toLowerCase();
  if (!name || !lowlight.registered(name)) return null;
  try {
    return toJsxRuntime(lowlight.highlight(name, code), { Fragment, jsx, jsxs });
  } catch {
    return null; // a grammar that fails on odd input: plain text is still right
  }
}
