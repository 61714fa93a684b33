// "punycode/" is the npm package: plain "punycode" names Node's own module, whose
// browser stand-in in Bun's bundler has no toUnicode.
import { toUnicode } from "punycode/";

/**
 * A domain as people write it: the service keeps internationalised names in
 * punycode (xn--…), which only the stored form beside it should show.
 */
export function shownDomain(domain: string): string {
  const written = toUnicode(domain);
  return written === domain ? domain : `${written} (${domain})`;
}
