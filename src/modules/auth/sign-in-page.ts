/** The small HTML pages a sign-in link lands on in a browser; API clients asking for JSON get JSON. */

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Content Telemetry</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; color: #1a1a1a; background: #fafafa; margin: 0; }
  main { max-width: 32rem; margin: 15vh auto; padding: 2rem; background: #fff; border: 1px solid #ddd; border-radius: 8px; }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  code { background: #f0f0f0; padding: 0 .25rem; border-radius: 3px; }
</style>
</head>
<body><main>
<h1>${escapeHtml(title)}</h1>
${body}
</main></body>
</html>
`;
}

export function signedInPage(email: string, expiresAt: string): string {
  return page(
    "You are signed in",
    `<p>Signed in as <strong>${escapeHtml(email)}</strong>. This browser keeps the session (a cookie) until ${escapeHtml(expiresAt)}.</p>
<p><a href="/app">Open the dashboard</a>. The API is described at <a href="/openapi">/openapi</a>.</p>`,
  );
}

/**
 * Where a sign-in link lands in a browser, or for anyone not asking for JSON: a
 * button that spends it. Mail scanners and link previews open the links in the
 * mail they pass on, and a link opened by them would be spent before its owner
 * gets to it; only a person presses the button.
 */
export function confirmSignInPage(token: string, email: string): string {
  return page(
    "Sign in to Content Telemetry",
    `<p>This link signs this browser in as <strong>${escapeHtml(email)}</strong>. It works once. If that is not your address, close this page: someone else asked for the link.</p>
<form method="post" action="${escapeHtml(`/api/v1/identity/auth/magic-link/sign-in?token=${encodeURIComponent(token)}`)}">
<button type="submit">Sign in</button>
</form>`,
  );
}

/** How a sign-in that failed is tried again: a new link, or a new start at the provider. */
const tryAgain = {
  link: {
    title: "This sign-in link cannot be used",
    advice: `<p>Each link works once, for a limited time. <a href="/app">Ask for a new one</a> on the sign-in page (or, from a client, <code>POST /api/v1/identity/auth/magic-link</code> with your e-mail address).</p>`,
  },
  provider: {
    title: "This sign-in did not complete",
    advice: `<p><a href="/app">Start again</a> from the sign-in page, in this browser. If it keeps failing, the sign-in provider may be unavailable: try later, or ask for a sign-in link by e-mail there.</p>`,
  },
};

export type SignInWay = keyof typeof tryAgain;

export function signInFailedPage(detail: string, way: SignInWay): string {
  const { title, advice } = tryAgain[way];
  return page(title, `<p>${escapeHtml(detail)}.</p>\n${advice}`);
}
