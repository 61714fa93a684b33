/** The quality (`q`) the Accept header gives `mediaType`, 0 when it does not list it. */
export function acceptQuality(accept: string | undefined, mediaType: string): number {
  for (const range of (accept ?? "").split(",")) {
    const [type, ...params] = range.split(";").map((part) => part.trim().toLowerCase());
    if (type !== mediaType) continue;
    const q = params.find((param) => param.startsWith("q="));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    return Number.isFinite(quality) ? quality : 0;
  }
  return 0;
}

/** A browser following a link: it asks for HTML ahead of JSON. */
export function prefersHtml(accept: string | undefined): boolean {
  const html = acceptQuality(accept, "text/html");
  return html > 0 && html > acceptQuality(accept, "application/json");
}
