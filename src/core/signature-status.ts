import { Type } from "@sinclair/typebox";

/**
 * What the service knows of a stored event's signature:
 * - verified: the signature checks out under a live key of the reporter's manifest;
 * - unverified: no signature, or the reporter has no valid manifest to check it with;
 * - invalid: not a detached EdDSA JWS, or the signature does not match the body;
 * - unknown_key: `kid` names no key of the reporter's manifest;
 * - expired_key: the key's `expires` has passed, or cannot be read (never taken as live).
 */
export const SignatureStatus = Type.Union([
  Type.Literal("verified"),
  Type.Literal("unverified"),
  Type.Literal("invalid"),
  Type.Literal("unknown_key"),
  Type.Literal("expired_key"),
]);
export type SignatureStatus = typeof SignatureStatus.static;
