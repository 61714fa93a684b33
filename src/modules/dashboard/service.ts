import { fileURLToPath } from "node:url";

/**
 * The dashboard's browser code (web/), bundled by Bun once per process on first
 * use and kept in memory: nothing is fetched from elsewhere, so it works offline,
 * and a fresh clone needs no build step.
 */
const webDir = fileURLToPath(new URL("../../../web/", import.meta.url));

export interface Asset {
  body: string | Blob;
  type: string;
}

let bundle: Promise<string> | undefined;

async function buildBundle(): Promise<string> {
  const result = await Bun.build({ entrypoints: [`${webDir}app.ts`], target: "browser", minify: true });
  const output = result.outputs[0];
  if (!result.success || !output) {
    throw new Error(`the dashboard bundle failed: ${result.logs.map(String).join("; ")}`);
  }
  return output.text();
}

/** The dashboard's script, built once (a failed build is tried again on the next request). */
export function dashboardScript(): Promise<string> {
  bundle ??= buildBundle().catch((error: unknown) => {
    bundle = undefined;
    throw error;
  });
  return bundle;
}

const staticAssets: Record<string, () => Asset> = {
  "app.css": () => ({ body: Bun.file(`${webDir}style.css`), type: "text/css; charset=utf-8" }),
  "uplot.css": () => ({ body: Bun.file(require.resolve("uplot/dist/uPlot.min.css")), type: "text/css; charset=utf-8" }),
};

export async function dashboardAsset(name: string): Promise<Asset | undefined> {
  if (name === "app.js") return { body: await dashboardScript(), type: "text/javascript; charset=utf-8" };
  return Object.hasOwn(staticAssets, name) ? staticAssets[name]?.() : undefined;
}

/**
 * The page every dashboard URL loads; the script renders the view its query names.
 * The view is no live region: each redraw would be read out whole, every region as
 * it loads. Errors are alerts, and what an action makes (a key, a link) is said
 * by a live region of its own.
 */
export const dashboardShell = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Content Telemetry</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/app/assets/uplot.css">
<link rel="stylesheet" href="/app/assets/app.css">
</head>
<body>
<div id="app"><p>Loading…</p><noscript><p>The dashboard needs JavaScript; the API is described at <a href="/openapi">/openapi</a>.</p></noscript></div>
<script type="module" src="/app/assets/app.js"></script>
</body>
</html>
`;

/** Only the service's own scripts, styles and API: no inline code, no other origin, no framing. */
export const dashboardSecurityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
};
