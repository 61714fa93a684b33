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
