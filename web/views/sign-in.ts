import { identity, ok } from "../api.ts";
import { h } from "../dom.ts";
import { loaded, submitting } from "../feedback.ts";

/** Sign-in by emailed link (the existing magic-link routes); the Sign in button on the link's page signs this browser in. */
export function signIn(): HTMLElement {
  const sent = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "card narrow" },
    h("h1", {}, "Sign in"),
    h("label", { for: "email" }, "Email address"),
    h("input", { id: "email", name: "email", type: "email", required: true, autocomplete: "email" }),
    h("button", { type: "submit" }, "Email me a sign-in link"),
  );
  submitting(form, async () => {
    const email = String(new FormData(form).get("email") ?? "");
    await ok(identity.auth["magic-link"].post({ email }));
    sent.replaceChildren(
      h(
        "div",
        { class: "notice" },
        h(
          "p",
          {},
          `If ${email} may sign in, a link is on its way. Open it in this browser and press Sign in on its page.`,
        ),
        h(
          "p",
          { class: "muted" },
          "No mail server configured (development)? The message is kept in the service's outbox: run ",
          h("code", {}, "bun run cli mail list"),
          " (start the service with ",
          h("code", {}, "MAIL_OUTBOX_RAW_LINKS=true"),
          " to keep the link usable there).",
        ),
      ),
    );
  });
  const providers = loaded("Other ways to sign in", async () => {
    const { items } = await ok(identity.auth.oidc.providers.get());
    if (items.length === 0) return null;
    return h(
      "div",
      { class: "card narrow" },
      h("p", {}, "Or sign in with:"),
      ...items.map((provider) => h("p", {}, h("a", { href: provider.start_url, class: "button" }, provider.id))),
    );
  });
  return h("div", {}, form, sent, providers);
}
