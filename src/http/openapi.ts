import { openapi } from "@elysiajs/openapi";

export const openapiPlugin = () =>
  openapi({
    path: "/openapi",
    specPath: "/openapi/json",
    documentation: {
      info: {
        title: "Content Telemetry reporting and query service",
        version: "0.1.0",
        description:
          "Ingest of Content Telemetry v1 sessions and events, content-owner reads, click tokens and the identity control plane. Every error is an RFC 9457 problem (application/problem+json) with a stable `code`; validation errors list each failing field in `errors`.",
      },
      components: {
        securitySchemes: {
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
          session: { type: "http", scheme: "bearer" },
        },
      },
    },
  });
