import { FormatRegistry, type StringOptions } from "@sinclair/typebox";
import { t } from "elysia";

const storableText = "storable-text";

// PostgreSQL text refuses NUL, and a lone UTF-16 surrogate would be stored as U+FFFD:
// free text that cannot be kept exactly as sent is refused at its own field instead.
if (!FormatRegistry.Has(storableText)) {
  FormatRegistry.Set(storableText, (value) => value.isWellFormed() && !value.includes("\u0000"));
}

/** A free-text string stored as sent: no NUL characters, no unpaired surrogates (400 at its path otherwise). */
export const Text = (options: StringOptions = {}) => t.String({ ...options, format: storableText });

const singleLine = "single-line-text";

// A name goes into mail subjects and lines of text (an invitation names its
// organisation): line breaks and other control characters in it let whoever
// chose it write lines of their own into someone else's inbox.
if (!FormatRegistry.Has(singleLine)) {
  FormatRegistry.Set(singleLine, (value) => value.isWellFormed() && !/\p{Cc}|[\u2028\u2029]/u.test(value));
}

/** A name: storable text on one line, without control characters (400 at its path otherwise). */
export const Name = (options: StringOptions = {}) => t.String({ ...options, format: singleLine });
