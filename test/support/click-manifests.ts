import { updateSettings } from "../../src/modules/settings/service.ts";
import { createTestOrg, type TestOrg } from "./fixtures.ts";
import { call } from "./http.ts";
import { testRuntime } from "./runtime.ts";
import { batch } from "./telemetry-events.ts";

/** Sets an organisation's click-token flag (the settings route's own tests live in test/identity). */
export async function setFlag(
  org: TestOrg,
  flag: "share_sessions_via_click_tokens" | "visible_in_click_token_lookups",
  on = true,
): Promise<void> {
  const { ctx } = await testRuntime();
  await updateSettings(ctx.sql, org.id, { [flag]: on });
}

/** A content owner with a verified domain of its own, visible in click-token lookups unless asked otherwise. */
export async function visibleOwner(visible = true): Promise<TestOrg & { domain: string }> {
  const owner = await createTestOrg();
  if (visible) await setFlag(owner, "visible_in_click_token_lookups");
  return owner as TestOrg & { domain: string };
}

/**
 * An agent sharing sessions via click tokens (unless asked otherwise) with a
 * session at `privacy_level` holding `events`, and a token for `clickUrl`.
 */
export async function agentSessionWithToken(options: {
  events: unknown[];
  clickUrl: string;
  privacyLevel?: string;
  share?: boolean;
}) {
  const agent = await createTestOrg({ type: "agent" });
  if (options.share ?? true) await setFlag(agent, "share_sessions_via_click_tokens");
  const started = await call("POST", "/sessions/start", {
    key: agent.key,
    body: { agent_id: "assistant-1", privacy_level: options.privacyLevel ?? "full" },
  });
  const sessionId = started.body.session_id as string;
  if (options.events.length > 0) {
    const reported = await call("POST", "/events", {
      key: agent.key,
      body: batch(options.events, { session_id: sessionId }),
    });
    if (reported.status !== 200) throw new Error(`events refused: ${JSON.stringify(reported.body)}`);
  }
  const minted = await call("POST", "/click-tokens", {
    key: agent.key,
    body: { session_id: sessionId, content_url: options.clickUrl },
  });
  return { agent, sessionId, token: minted.body.token as string };
}
