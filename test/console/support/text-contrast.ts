/**
 * WCAG 2.x text contrast (1.4.3, level AA) as the browser renders the page: every visible element with
 * text of its own, its computed colour (`fill` for chart text in SVG) against the backgrounds behind it,
 * blended from the page's white canvas inwards. AA asks 4.5:1, or 3:1 for large text (24 px, or 18.66 px
 * bold). Inactive controls (disabled, aria-disabled) are exempt, as WCAG says; so is text clipped to a
 * pixel for screen readers only.
 */
import type { Page } from 'playwright-core';

/** One line per text below its contrast threshold (or whose colours could not be read). */
export function lowContrastText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Rgba = [number, number, number, number];
    const view = globalThis as any;
    const style = (element: any) => view.getComputedStyle(element);
    const parse = (value: string): Rgba | undefined => {
      const match = /^rgba?\(([^)]+)\)$/.exec(value.trim());
      if (!match) return undefined;
      const [r, g, b, a] = match[1]!
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return [r!, g!, b!, a ?? 1];
    };
    const over = (top: Rgba, below: Rgba): Rgba => {
      const [r, g, b, a] = top;
      return [r * a + below[0] * (1 - a), g * a + below[1] * (1 - a), b * a + below[2] * (1 - a), 1];
    };
    const luminance = ([r, g, b]: Rgba) => {
      const channel = (value: number) => {
        const c = value / 255;
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
    };
    /** The opaque colour behind `element`: its ancestors' backgrounds blended over the white canvas. */
    const backdrop = (element: any): Rgba | undefined => {
      const chain: any[] = [];
      for (let node = element; node && node.nodeType === 1; node = node.parentElement) chain.push(node);
      let colour: Rgba = [255, 255, 255, 1];
      for (const node of chain.reverse()) {
        const computed = style(node);
        if (computed.backgroundImage !== 'none') return undefined;
        const background = parse(computed.backgroundColor);
        if (!background) return undefined;
        colour = over(background, colour);
      }
      return colour;
    };

    const problems: string[] = [];
    for (const element of Array.from(view.document.body.querySelectorAll('*')) as any[]) {
      const ownText = Array.from(element.childNodes as ArrayLike<any>)
        .filter((node) => node.nodeType === 3)
        .map((node) => node.textContent as string)
        .join('')
        .trim();
      if (!ownText) continue;
      const box = element.getBoundingClientRect();
      const computed = style(element);
      if (box.width <= 1 || box.height <= 1 || computed.visibility !== 'visible') continue;
      if (element.closest(':disabled, [aria-disabled="true"]')) continue;
      const inSvg = element.namespaceURI === 'http://www.w3.org/2000/svg';
      const label = `${element.tagName.toLowerCase()} "${ownText.slice(0, 40)}"`;
      const text = parse(inSvg ? computed.fill : computed.color);
      const behind = backdrop(element);
      if (!text || !behind) {
        problems.push(`${label}: colours not readable (${inSvg ? computed.fill : computed.color})`);
        continue;
      }
      const [lighter, darker] = [luminance(over(text, behind)), luminance(behind)].sort((x, y) => y - x);
      const ratio = (lighter! + 0.05) / (darker! + 0.05);
      const size = Number.parseFloat(computed.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(computed.fontWeight) >= 700);
      const needed = large ? 3 : 4.5;
      if (ratio < needed) problems.push(`${label}: ${ratio.toFixed(2)}:1, needs ${needed}:1`);
    }
    return problems;
  });
}
