import { t } from "elysia";

export const Email = t.String({ format: "email", maxLength: 254, description: "e-mail address" });

export const MagicLinkRequest = t.Object({ email: Email }, { additionalProperties: false });
export const MagicLinkVerify = t.Object(
  { token: t.String({ minLength: 1, maxLength: 200, description: "the token from the sign-in link" }) },
  { additionalProperties: false },
);

export const SignedIn = t.Object({
  session_token: t.String({ description: "opaque session id: send as Authorization: Bearer …; also set as a cookie" }),
  expires_at: t.Date(),
  user: t.Object({ id: t.String({ format: "uuid" }), email: t.String() }),
});

export const WhoAmI = t.Object({
  user: t.Object({ id: t.String({ format: "uuid" }), email: t.String() }),
  is_operator_admin: t.Boolean(),
  expires_at: t.Date(),
});

export const OidcProviderParams = t.Object({ provider: t.String({ pattern: "^[a-z0-9][a-z0-9-]{0,39}$" }) });
export const OidcCallbackQuery = t.Object({
  code: t.Optional(t.String({ maxLength: 2048 })),
  state: t.Optional(t.String({ maxLength: 512 })),
  error: t.Optional(t.String({ maxLength: 512 })),
  error_description: t.Optional(t.String({ maxLength: 2048 })),
});
