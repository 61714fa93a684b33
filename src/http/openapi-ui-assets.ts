import { Elysia } from "elysia";

/**
 * The API docs page's script and stylesheet, from the pinned swagger-ui-dist
 * package (package.json), served by the service itself: the page must work
 * offline and behind firewalls, so no CDN.
 */
export const openapiUiAssetPath = "/openapi/assets";

const assets = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
} as const;

const assetFile = (name: keyof typeof assets) => Bun.file(require.resolve(`swagger-ui-dist/${name}`));

export const openapiUiAssets = new Elysia({ name: "openapi-ui-assets" }).get(
  `${openapiUiAssetPath}/:name`,
  ({ params, set, status }) => {
    if (!Object.hasOwn(assets, params.name)) return status(404, "Not Found");
    const name = params.name as keyof typeof assets;
    set.headers["content-type"] = assets[name];
    set.headers["cache-control"] = "public, max-age=86400";
    return assetFile(name);
  },
  { detail: { hide: true } },
);
