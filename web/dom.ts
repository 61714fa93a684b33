/** Builds elements from data without ever parsing it as HTML. */

type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "number" ? String(child) : child);
  }
  return element;
}

export const formatCount = (n: number) => new Intl.NumberFormat("en").format(n);

/** A time (a Date or epoch ms) as people read it, to the minute, in UTC: 2026-11-27 23:00. */
export const readable = (time: Date | number) => new Date(time).toISOString().slice(0, 16).replace("T", " ");

/** A table in a box of its own that scrolls sideways when the table is wider than the screen, never the page. */
export const scrollBox = (table: HTMLTableElement): HTMLElement => h("div", { class: "table-box" }, table);
