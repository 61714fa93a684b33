import { Elysia, t } from "elysia";
import type { AppContext } from "../../context.ts";
import { accessPlugin } from "../../http/access.ts";
import { noContent } from "../../http/bodiless-answers.ts";
import { IdParams } from "../../http/id-params.ts";
import { ownProblems } from "../../http/openapi-examples.ts";
import { answerPage, Paged, pageQuery } from "../../http/paging.ts";
import {
  CreatedWebhook,
  CreateWebhook,
  DeliveryListQuery,
  DeliveryParams,
  DeliveryRecord,
  WebhookListQuery,
  WebhookRecord,
} from "./model.ts";
import {
  checkCreateInput,
  createEndpoint,
  deleteEndpoint,
  enableEndpoint,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  ping,
  redeliver,
  requireSecrets,
  rotateSecret,
} from "./service.ts";

export const webhooksModule = (ctx: AppContext) =>
  new Elysia({ name: "identity.webhooks", prefix: "/api/v1/identity", detail: { tags: ["Identity: webhooks"] } })
    .use(accessPlugin(ctx))
    .post(
      "/webhooks",
      async ({ access, body, set }) => {
        const secrets = requireSecrets(ctx.webhookSecrets);
        const input = checkCreateInput(body, { allowLoopback: ctx.config.WEBHOOK_ALLOW_LOOPBACK });
        const { endpoint, secret } = await createEndpoint(ctx.sql, secrets, {
          orgId: access.orgId,
          url: input.url,
          eventTypes: input.eventTypes,
          actor: access.actor,
        });
        set.status = 201;
        set.headers["cache-control"] = "no-store";
        return { ...endpoint, secret };
      },
      {
        org: "write",
        body: CreateWebhook,
        response: { 201: CreatedWebhook },
        detail: {
          summary: "Create a webhook endpoint (identity:write key, or an owner's or admin's session)",
          ...ownProblems("invalid_webhook_url", "unknown_event_type", "webhook_limit_reached"),
          description:
            "201 with the signing secret, shown in this response only. 400 invalid_webhook_url or unknown_event_type (naming the field, nothing stored); 409 webhook_limit_reached past 10 active endpoints.",
        },
      },
    )
    .get(
      "/webhooks",
      ({ access, query }) =>
        answerPage(query, (page) => listEndpoints(ctx.sql, access.orgId, query.status ?? "active", page)),
      {
        org: "read",
        query: t.Object({ ...WebhookListQuery.properties, ...pageQuery() }),
        response: Paged(WebhookRecord),
        detail: { summary: "The organisation's active webhook endpoints (or `status=disabled`); never their secrets" },
      },
    )
    .get("/webhooks/:id", async ({ access, params }) => getEndpoint(ctx.sql, access.orgId, params.id), {
      org: "read",
      params: IdParams,
      response: WebhookRecord,
      detail: { summary: "One webhook endpoint, active or disabled, with its health; never its secret" },
    })
    .delete(
      "/webhooks/:id",
      async ({ access, params, set }) => {
        await deleteEndpoint(ctx.sql, { orgId: access.orgId, id: params.id, actor: access.actor });
        set.status = 204;
      },
      {
        org: "write",
        params: IdParams,
        detail: {
          summary: "Delete (disable) a webhook endpoint and drop its pending deliveries: 204",
          responses: noContent("deleted"),
        },
      },
    )
    .post(
      "/webhooks/:id/enable",
      async ({ access, params }) =>
        enableEndpoint(ctx.sql, { orgId: access.orgId, id: params.id, actor: access.actor }),
      {
        org: "write",
        params: IdParams,
        response: WebhookRecord,
        detail: {
          summary: "Re-enable an endpoint disabled for failing",
          ...ownProblems("webhook_deleted", "webhook_limit_reached"),
          description: "A deleted endpoint stays deleted (409 webhook_deleted); the 10-endpoint limit applies.",
        },
      },
    )
    .post(
      "/webhooks/:id/rotate-secret",
      async ({ access, params, set }) => {
        const secrets = requireSecrets(ctx.webhookSecrets);
        const { endpoint, secret } = await rotateSecret(ctx.sql, secrets, {
          orgId: access.orgId,
          id: params.id,
          overlapHours: ctx.config.WEBHOOK_SECRET_OVERLAP_HOURS,
          actor: access.actor,
        });
        set.headers["cache-control"] = "no-store";
        return { ...endpoint, secret };
      },
      {
        org: "write",
        params: IdParams,
        response: CreatedWebhook,
        detail: {
          summary: "Rotate the signing secret; the new one is in this response only",
          ...ownProblems("webhook_deleted"),
          description:
            "The previous secret keeps signing beside the new one until previous_secret_expires_at (WEBHOOK_SECRET_OVERLAP_HOURS, 24 by default): X-Svc-Signature carries the new secret's signature and X-Svc-Signature-Previous the old one's.",
        },
      },
    )
    .post(
      "/webhooks/:id/ping",
      async ({ access, params, set }) => {
        requireSecrets(ctx.webhookSecrets);
        set.status = 202;
        return ping(ctx.sql, { orgId: access.orgId, endpointId: params.id });
      },
      {
        org: "write",
        params: IdParams,
        response: { 202: DeliveryRecord },
        detail: {
          summary: "Send a `ping` test event to this endpoint: 202 with the queued delivery",
          ...ownProblems("webhook_deleted", "webhook_disabled"),
          description: "Sent by the next sweep (within seconds), signed like any delivery; its log shows the outcome.",
        },
      },
    )
    .get(
      "/webhooks/:id/deliveries",
      ({ access, params, query }) =>
        answerPage(query, (page) =>
          listDeliveries(ctx.sql, { orgId: access.orgId, endpointId: params.id, status: query.status, page }),
        ),
      {
        org: "read",
        params: IdParams,
        query: t.Object({ ...DeliveryListQuery.properties, ...pageQuery() }),
        response: Paged(DeliveryRecord),
        detail: {
          summary: "The endpoint's deliveries, newest first, with their latest 10 attempts; filter by `status`",
        },
      },
    )
    .get(
      "/webhooks/:id/deliveries/:delivery_id",
      async ({ access, params }) =>
        getDelivery(ctx.sql, { orgId: access.orgId, endpointId: params.id, deliveryId: params.delivery_id }),
      {
        org: "read",
        params: DeliveryParams,
        response: DeliveryRecord,
        detail: { summary: "One delivery with its attempt log (the latest 100 attempts)" },
      },
    )
    .post(
      "/webhooks/:id/deliveries/:delivery_id/redeliver",
      async ({ access, params, set }) => {
        requireSecrets(ctx.webhookSecrets);
        set.status = 202;
        return redeliver(ctx.sql, { orgId: access.orgId, endpointId: params.id, deliveryId: params.delivery_id });
      },
      {
        org: "write",
        params: DeliveryParams,
        response: { 202: DeliveryRecord },
        detail: {
          summary: "Send a delivery again (same X-Svc-Delivery-Id): 202, sent by the next sweep",
          ...ownProblems("delivery_in_flight", "webhook_deleted", "webhook_disabled"),
          description:
            "A delivered, dead or dropped delivery starts a new cycle of up to 8 attempts; a pending one becomes due now. 409 delivery_in_flight while it is being sent (also after its endpoint was disabled and enabled meanwhile).",
        },
      },
    );
