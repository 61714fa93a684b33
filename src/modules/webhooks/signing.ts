import { createHmac } from "node:crypto";
import { randomToken } from "../../core/secrets.ts";

/**
 * What a delivery looks like on the wire (interface spec, Webhook delivery envelope
 * and delivery rules 1-3): a JSON envelope, signed with HMAC-SHA256 over
 * `{timestamp}.{body}` keyed with the endpoint's secret (the whole `whsec_…` string
 * as UTF-8 bytes), hex-encoded.
 */
export const secretPrefix = "whsec_";

/** A new signing secret: `whsec_` and 32 random bytes in base64url (43 characters). */
export const newSigningSecret = () => `${secretPrefix}${randomToken()}`;

export interface Envelope {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** The exact body sent: the envelope with its fields in the documented order. */
export function envelopeBody(envelope: Envelope): string {
  return JSON.stringify({
    id: envelope.id,
    type: envelope.type,
    created_at: envelope.created_at,
    data: envelope.data,
  });
}

/** Hex HMAC-SHA256 of `{timestamp}.{body}` keyed with `secret`. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

/**
 * The headers of one attempt. `previousSecret` is the rotated-out secret during a
 * rotation's overlap. X-Svc-Signature is always the one hex
 * signature the interface specifies, the current secret's, so a receiver that
 * compares it exactly verifies once it holds the new secret; the previous
 * secret's signature travels in X-Svc-Signature-Previous for a receiver that
 * has not switched yet.
 */
export function deliveryHeaders(input: {
  deliveryId: string;
  eventType: string;
  timestamp: number;
  body: string;
  secret: string;
  previousSecret?: string;
}): Record<string, string> {
  const { secret, previousSecret } = input;
  return {
    "content-type": "application/json",
    "user-agent": "content-telemetry-webhooks/1",
    "x-svc-signature": signPayload(secret, input.timestamp, input.body),
    ...(previousSecret === undefined
      ? {}
      : { "x-svc-signature-previous": signPayload(previousSecret, input.timestamp, input.body) }),
    "x-svc-timestamp": String(input.timestamp),
    "x-svc-event-type": input.eventType,
    "x-svc-delivery-id": input.deliveryId,
  };
}
