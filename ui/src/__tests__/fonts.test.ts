import { afterEach, describe, expect, it } from 'vitest';
import { handedFonts } from '../firstScreen';
import { applyChosenFonts } from '../fonts';

const latin = (root: HTMLElement) => root.style.getPropertyValue('--font-latin');

describe('applyChosenFonts', () => {
  it("draws Latin text in the window's families, in its order", () => {
    const root = document.createElement('html');
    applyChosenFonts(root, ['Cantarell', 'DejaVu Sans']);
    expect(latin(root)).toBe("'Cantarell', 'DejaVu Sans'");
  });

  it('falls back to the generic sans-serif when the machine has none of them', () => {
    const root = document.createElement('html');
    applyChosenFonts(root, []);
    expect(latin(root)).toBe('sans-serif');
  });

  it("leaves the stylesheet's own list where the window chose nothing", () => {
    const root = document.createElement('html');
    applyChosenFonts(root, null);
    applyChosenFonts(root, undefined);
    expect(latin(root)).toBe('');
  });

  it('keeps a name with a quote one family', () => {
    const root = document.createElement('html');
    applyChosenFonts(root, ["Ann's Sans", 'Back\\slash']);
    expect(latin(root)).toBe("'Ann\\'s Sans', 'Back\\\\slash'");
  });
});

describe('handedFonts', () => {
  afterEach(() => {
    delete window.__KEYPOOL_FIRST_SCREEN__;
  });

  it('reads the families the window handed over, on any load', () => {
    expect(handedFonts()).toBeUndefined();
    window.__KEYPOOL_FIRST_SCREEN__ = { fonts: ['DejaVu Sans'] } as unknown as Window['__KEYPOOL_FIRST_SCREEN__'];
    expect(handedFonts()).toEqual(['DejaVu Sans']);
  });
});
