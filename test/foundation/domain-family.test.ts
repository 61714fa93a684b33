import { expect, test } from "bun:test";
import { domainFamily } from "../../src/core/hosts.ts";

test("a domain's family is its shortest parent anyone can hold: shared by its parents and subdomains", () => {
  expect(domainFamily("example.com")).toBe("example.com");
  expect(domainFamily("a.b.news.example.com")).toBe("example.com");
  expect(domainFamily("news.example.co.uk")).toBe("example.co.uk");
  // Across a private suffix (s3.amazonaws.com), which the registrable domain would split.
  expect(domainFamily("bucket.s3.amazonaws.com")).toBe("amazonaws.com");
  expect(domainFamily("amazonaws.com")).toBe("amazonaws.com");
  // Directly under one (github.io): the domain is its own family.
  expect(domainFamily("someone.github.io")).toBe("someone.github.io");
  // An exception to a wildcard suffix (*.kawasaki.jp but !city.kawasaki.jp) is holdable.
  expect(domainFamily("www.city.kawasaki.jp")).toBe("city.kawasaki.jp");
});
