import { ApiError } from "./api.ts";
import { h } from "./dom.ts";
import { redraw } from "./state.ts";

/** A field's JSON pointer in words: `/grantee_org_id` is "grantee org id", `/event_types/0` "event types, item 1". */
function fieldInWords(path: string): string {
  const segments = path.split("/").filter((segment) => segment !== "");
  const index = /^\d+$/.test(segments.at(-1) ?? "") ? Number(segments.pop()) : undefined;
  const name = (segments.at(-1) ?? "the request").replaceAll("_", " ");
  return index === undefined ? name : `${name}, item ${index + 1}`;
}

/** The service's detail when it only lists the fields at fault ("the request body is invalid: /a, /b"). */
const onlyNamesFields = (message: string) => /^the [a-z ]+ (are|is) invalid: \//.test(message);

/**
 * An error in words, next to what it concerns; never a blank page. The service's
 * detail comes first, unless it only lists the fields at fault or already says
 * what the one field's message says; then each field at fault, named in words.
 */
export function errorNote(error: unknown): HTMLElement {
  const message = error instanceof ApiError ? error.message : "Something went wrong while showing this page.";
  const fields = error instanceof ApiError ? error.fields : [];
  const saidAlready = fields.length === 1 && message.includes(fields[0]?.message ?? "");
  const lines = [
    ...(fields.length > 0 && onlyNamesFields(message) ? [] : [message]),
    ...(saidAlready ? [] : fields.map((field) => `${fieldInWords(field.path)} ${field.message}`)),
  ];
  // A session that ended meanwhile (expired, signed out elsewhere) refuses every action: offer the way back.
  const signInAgain =
    error instanceof ApiError && error.status === 401
      ? h("p", {}, h("a", { href: location.href }, "Sign in again"))
      : null;
  return h("div", { class: "error", role: "alert" }, ...lines.map((line) => h("p", {}, line)), signInAgain);
}

/** Trouble every region of a view meets at once. */
const serviceWide = (error: unknown): error is ApiError => error instanceof ApiError && error.serviceWide;

/** What happened to the service and what to do, with a way to draw the view again. */
function serviceAlert(error: ApiError): HTMLElement {
  return h(
    "div",
    { class: "error service-alert", role: "alert" },
    h("p", {}, error.message),
    h("button", { type: "button", onclick: redraw }, "Try again"),
  );
}

/** An error that stopped the view from being drawn at all. */
export const viewErrorNote = (error: unknown) => (serviceWide(error) ? serviceAlert(error) : errorNote(error));

/**
 * A region under a heading naming it, one level below the heading of what it is in
 * (`level`: 2 beneath the view's h1), kept throughout, so that the view's headings
 * list the region while it loads and if it fails. It shows "Loading…", then what
 * `load` builds (given the heading, to add what the API tells, such as a count), or
 * the error it met; what `load` finds nothing to show for (null) takes the region
 * away, rather than leaving an empty one named in a screen reader's list of regions.
 * The service's own trouble is said once for the view, under its heading, where a
 * screen reader announces it once; the region says only that it did not load.
 */
export function loaded(
  title: string,
  load: (heading: HTMLHeadingElement) => Promise<Node | null>,
  level: 2 | 3 | 4 = 2,
): HTMLElement {
  const heading = h(`h${level}`, {}, title);
  const region = h("section", { "aria-label": title, "aria-busy": "true" });
  const show = (content: Node) => region.replaceChildren(heading, content);
  show(h("p", { class: "muted" }, "Loading…"));
  load(heading)
    .then((content) => (content ? show(content) : region.remove()))
    .catch((error: unknown) => {
      const view = region.closest("main");
      if (!serviceWide(error) || !view) return show(errorNote(error));
      show(h("p", { class: "muted" }, "Not loaded."));
      if (view.querySelector(".service-alert")) return;
      const viewHeading = view.querySelector(":scope > h1");
      if (viewHeading) viewHeading.after(serviceAlert(error));
      else view.prepend(serviceAlert(error));
    })
    .finally(() => region.setAttribute("aria-busy", "false"));
  return region;
}

/** Runs a form's action, showing its error beside the form and disabling it meanwhile. */
export function submitting(form: HTMLFormElement, action: () => Promise<void>): void {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]") as HTMLButtonElement | null;
    form.querySelector(".error")?.remove();
    if (button && document.activeElement === button) pressedLast = button;
    if (button) button.disabled = true;
    try {
      await action();
    } catch (error) {
      form.append(errorNote(error));
    } finally {
      if (pressedLast === button) pressedLast = undefined;
      if (button) button.disabled = false;
    }
  });
}

/**
 * The control whose action ran last. Disabling a focused control takes the focus
 * away, so a redraw after its action asks here which control to give it back to.
 */
let pressedLast: HTMLElement | undefined;

/** The control pressed last, once: the next redraw gives it the focus back. */
export function takePressed(): HTMLElement | undefined {
  const pressed = pressedLast;
  pressedLast = undefined;
  return pressed;
}

/** A button's action, with its error shown beside the button. */
export function onPress(button: HTMLButtonElement, action: () => Promise<void>): HTMLButtonElement {
  button.addEventListener("click", async () => {
    button.parentElement?.querySelector(".error")?.remove();
    if (document.activeElement === button) pressedLast = button;
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      button.after(errorNote(error));
    } finally {
      // A redraw during the action took it; without one, it is not kept for a later redraw.
      if (pressedLast === button) pressedLast = undefined;
      button.disabled = false;
    }
  });
  return button;
}
