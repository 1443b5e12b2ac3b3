// dockerignore_context.mjs — the files a `docker build` of DIR would send as its context: the
// work tree less what DIR/.dockerignore excludes, read by @balena/dockerignore (a port of
// Docker's own matcher: moby's dockerignore.ReadAll and fileutils patterns). As Docker, a
// directory excluded with no "!" exception is not walked; .dockerignore and the Dockerfile are
// sent whatever the patterns say. Symbolic links are sent as links (not followed).
// Usage: node dockerignore_context.mjs DIR [DOCKERFILE]   One line per file sent, "BYTES PATH"
// (relative to DIR, sorted); exit status 2 on a usage error.
import { readFileSync, readdirSync, lstatSync, existsSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const ignore = require("@balena/dockerignore");

const [dir, dockerfile = "Dockerfile"] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node dockerignore_context.mjs DIR [DOCKERFILE]");
  process.exit(2);
}
// moby's ReadAll: a line starting with # is a comment; blanks around a pattern go; an empty
// line is none; a leading "/" is dropped (the root is the context's).
const file = join(dir, ".dockerignore");
const patterns = existsSync(file)
  ? readFileSync(file, "utf8").split("\n").map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"))
      .map((l) => (l.startsWith("!") ? "!" + l.slice(1).trim().replace(/^\/+/, "") : l.replace(/^\/+/, "")))
  : [];
const ig = ignore().add(patterns);
const exceptions = patterns.some((p) => p.startsWith("!"));
const always = new Set([".dockerignore", dockerfile]);

const out = [];
function walk(rel) {
  for (const name of readdirSync(join(dir, rel)).sort()) {
    const path = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(dir, path));
    const excluded = ig.ignores(path) && !always.has(path);
    if (st.isDirectory()) {
      if (!excluded || exceptions) walk(path);
    } else if (!excluded) {
      out.push(`${st.size} ${path}`);
    }
  }
}
walk("");
process.stdout.write(out.sort((a, b) => (a.split(" ")[1] < b.split(" ")[1] ? -1 : 1)).join("\n") + "\n");
