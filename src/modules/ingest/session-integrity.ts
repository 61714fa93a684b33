import type { FieldError } from "../../core/problem.ts";

/** The fields of an event the session-document rules compare. */
interface Linkable {
  id?: unknown;
  type?: unknown;
  content_url?: unknown;
  content_id?: unknown;
  presentation_id?: unknown;
  citation_id?: unknown;
  ctx_token?: unknown;
}

/**
 * References inside one session document (standard 6.6, 6.7, 7.4.1): from the
 * event type and field that refers, to the event type referred to. Batches and
 * standalone events may refer to events delivered elsewhere and are not checked.
 */
const references = [
  { from: "content_engaged", field: "presentation_id", to: "content_presented" },
  { from: "content_presented", field: "citation_id", to: "content_cited" },
] as const;

/** A UUID as compared: its hex digits' case carries no meaning (RFC 9562). */
const uuidKey = (value: string) => value.toLowerCase();

/** Two events identify the same content unless content_id or content_url differ where both are given. */
function sameContent(a: Linkable, b: Linkable): boolean {
  for (const field of ["content_id", "content_url"] as const) {
    if (a[field] != null && b[field] != null && a[field] !== b[field]) return false;
  }
  return true;
}

/**
 * The cross-event rules of a session document (standard 5.7.5): event ids are
 * distinct; each reference names an event of the referred type in the document,
 * about the same content; one click token is bound to one presentation.
 */
export function sessionDocumentErrors(events: readonly unknown[], eventPath: (index: number) => string): FieldError[] {
  const errors: FieldError[] = [];
  const firstById = new Map<string, number>();
  const linkable = events.map((event) => (event !== null && typeof event === "object" ? (event as Linkable) : {}));
  linkable.forEach((event, index) => {
    if (typeof event.id !== "string") return;
    const first = firstById.get(uuidKey(event.id));
    if (first === undefined) firstById.set(uuidKey(event.id), index);
    else
      errors.push({
        path: `${eventPath(index)}/id`,
        message: `repeats the id of ${eventPath(first)}; event ids in a session document are distinct (section 6.6)`,
      });
  });

  const presentationOfToken = new Map<string, { presentation: string | null; index: number }>();
  linkable.forEach((event, index) => {
    for (const reference of references) {
      const target = event[reference.field];
      if (event.type !== reference.from || typeof target !== "string") continue;
      const targetIndex = firstById.get(uuidKey(target));
      const referred = targetIndex === undefined ? undefined : linkable[targetIndex];
      const path = `${eventPath(index)}/${reference.field}`;
      if (!referred || referred.type !== reference.to) {
        errors.push({ path, message: `matches no ${reference.to} event in this session document` });
      } else if (!sameContent(event, referred)) {
        errors.push({
          path,
          message: `refers to ${eventPath(targetIndex as number)}, a ${reference.to} event about different content`,
        });
      }
    }
    if (event.type === "content_engaged" && typeof event.ctx_token === "string" && event.presentation_id != null) {
      const presentation = typeof event.presentation_id === "string" ? uuidKey(event.presentation_id) : null;
      const bound = presentationOfToken.get(event.ctx_token);
      if (!bound) presentationOfToken.set(event.ctx_token, { presentation, index });
      else if (bound.presentation !== presentation) {
        errors.push({
          path: `${eventPath(index)}/ctx_token`,
          message: `is already bound to another presentation by ${eventPath(bound.index)}; one click token belongs to one presentation (section 7.4.1)`,
        });
      }
    }
  });
  return errors;
}
