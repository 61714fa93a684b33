import { t } from "elysia";

export const HealthResponse = t.Object({ status: t.Literal("ok") });
export const ReadyResponse = t.Object({
  status: t.Literal("ready"),
  database: t.Union([t.Literal("embedded"), t.Literal("server")]),
  latency_ms: t.Number(),
});
