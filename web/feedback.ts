import { ApiError } from "./api.ts";
import { h } from "./dom.ts";

/** A field's JSON pointer in words: `/grantee_org_id` is "grantee org id". */
const fieldInWords = (path: string) => (path.split("/").at(-1) ?? "").replaceAll("_", " ");

/**
 * An error in words, next to what it concerns; never a blank page. Each field at
 * fault is named in words with what is wrong with it; a message that already
 * says it all (the API often words one field's failure as its detail) is shown once.
 */
export function errorNote(error: unknown): HTMLElement {
  const message = error instanceof ApiError ? error.message : "Something went wrong while showing this page.";
  const fields = error instanceof ApiError ? error.fields : [];
  const saidAlready = fields.length === 1 && message.includes(fields[0]?.message ?? "");
  const lines =
    fields.length === 0 || saidAlready ? [message] : fields.map((f) => `${fieldInWords(f.path)} ${f.message}`);
  return h("div", { class: "error", role: "alert" }, ...lines.map((line) => h("p", {}, line)));
}

/** A region that shows "Loading…", then what `load` builds, or the error it met. */
export function loaded(label: string, load: () => Promise<Node>): HTMLElement {
  const region = h("section", { "aria-label": label, "aria-busy": "true" }, h("p", { class: "muted" }, "Loading…"));
  load()
    .then((content) => region.replaceChildren(content))
    .catch((error: unknown) => region.replaceChildren(errorNote(error)))
    .finally(() => region.setAttribute("aria-busy", "false"));
  return region;
}

/** Runs a form's action, showing its error beside the form and disabling it meanwhile. */
export function submitting(form: HTMLFormElement, action: () => Promise<void>): void {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button[type=submit]") as HTMLButtonElement | null;
    form.querySelector(".error")?.remove();
    if (button) button.disabled = true;
    try {
      await action();
    } catch (error) {
      form.append(errorNote(error));
    } finally {
      if (button) button.disabled = false;
    }
  });
}

/** A button's action, with its error shown beside the button. */
export function onPress(button: HTMLButtonElement, action: () => Promise<void>): HTMLButtonElement {
  button.addEventListener("click", async () => {
    button.parentElement?.querySelector(".error")?.remove();
    button.disabled = true;
    try {
      await action();
    } catch (error) {
      button.after(errorNote(error));
    } finally {
      button.disabled = false;
    }
  });
  return button;
}
