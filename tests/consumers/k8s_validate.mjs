// k8s_validate.mjs — validates Kubernetes manifests offline, as kubeconform -strict does: each
// document against the JSON schema of its kind from the Kubernetes API's OpenAPI (as the npm
// package kubernetes-models bundles it; the Prometheus Operator's CRDs from
// @kubernetes-models/prometheus-operator), then every field checked against the kind's
// declared fields (read from the models' type declarations), so that a misspelt or misplaced
// field, which the schemas alone let through, fails too. No network: the schemas are in
// node_modules (scripts/install-deps installs them).
// Usage: node k8s_validate.mjs FILE...   One line per document, "ok FILE KIND NAME" or
// "invalid FILE KIND NAME: why"; exit status 1 if any document is invalid or unknown.
import { readFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseAllDocuments } from "yaml";

const require = createRequire(import.meta.url);
const modules = dirname(dirname(require.resolve("kubernetes-models/package.json")));

// apiVersion -> the package folder of its models.
function modelDir(apiVersion) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  if (group === "monitoring.coreos.com")
    return join(modules, "@kubernetes-models/prometheus-operator", group, version);
  return join(modules, "kubernetes-models", group, version);
}

// The declared fields of the first interface of a .d.ts file: name -> type text; null when the
// file declares no interface (a type alias such as IntOrString, Quantity: a leaf).
const declared = new Map();
function fieldsOf(file) {
  if (declared.has(file)) return declared.get(file);
  const text = existsSync(file) ? readFileSync(file, "utf8") : "";
  const imports = new Map();
  for (const m of text.matchAll(/^import \{ ([^}]+) \} from "([^"]+)";$/gm))
    for (const name of m[1].split(",").map((s) => s.trim()))
      imports.set(name, m[2].startsWith(".") ? join(dirname(file), m[2].replace(/\.js$/, ".d.ts"))
                                              : join(modules, m[2] + ".d.ts"));
  const start = text.search(/^export interface /m);
  let fields = null;
  if (start >= 0) {
    fields = new Map();
    const lines = text.slice(start).split("\n");
    for (let i = 1; i < lines.length && lines[i] !== "}"; i++) {
      const m = lines[i].match(/^ {4}"([^"]+)"\??: (.*);?$/);
      if (!m) continue;
      let type = m[2].replace(/;$/, "");
      if (type === "{")	// { [key: string]: T } on the next line: a map of T; else any object
        type = (lines[i + 1].match(/^ {8}\[key: string\]: (.*);$/) || [null, "any"])[1].replace(/^/, "map:");
      fields.set(m[1], type);
    }
  }
  const entry = { fields, imports };
  declared.set(file, entry);
  return entry;
}

// Checks value against the declared type text (resolved through the imports of from); errors
// are pushed as "path: why".
function strict(value, type, from, path, errors) {
  if (value === null || typeof value !== "object") return;
  let m;
  if ((m = type.match(/^Array<(.*)>$/))) {
    if (Array.isArray(value)) value.forEach((v, i) => strict(v, m[1], from, `${path}[${i}]`, errors));
    return;
  }
  if (type.startsWith("map:")) {
    for (const [k, v] of Object.entries(value)) strict(v, type.slice(4), from, `${path}.${k}`, errors);
    return;
  }
  const file = from.imports.get(type);
  if (!file) return;	// string, number, a literal union, any: nothing more to check
  checkObject(value, fieldsOf(file), path, errors);
}

function checkObject(value, entry, path, errors) {
  if (!entry.fields) return;
  for (const [k, v] of Object.entries(value)) {
    if (!entry.fields.has(k)) errors.push(`${path}.${k}: no such field`);
    else strict(v, entry.fields.get(k), entry, `${path}.${k}`, errors);
  }
}

let bad = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    const where = `${file} ${doc.contents?.get?.("kind") ?? "?"} ${doc.getIn?.(["metadata", "name"]) ?? "?"}`;
    if (doc.errors.length) {
      console.log(`invalid ${where}: YAML: ${doc.errors[0].message}`);
      bad++;
      continue;
    }
    const obj = doc.toJS();
    if (!obj) continue;
    const errors = [];
    const dir = obj.apiVersion && obj.kind ? modelDir(obj.apiVersion) : null;
    if (!dir || !existsSync(join(dir, `${obj.kind}.js`))) {
      console.log(`invalid ${where}: no schema for ${obj.apiVersion} ${obj.kind}`);
      bad++;
      continue;
    }
    const Model = (await import(join(dir, `${obj.kind}.js`)))[obj.kind];
    try {
      new Model(obj).validate();
    } catch (e) {
      errors.push(e.message);
    }
    checkObject(obj, fieldsOf(join(dir, `${obj.kind}.d.ts`)), "", errors);
    console.log(errors.length ? `invalid ${where}: ${errors.join("; ")}` : `ok ${where}`);
    bad += errors.length > 0;
  }
}
process.exit(bad ? 1 : 0);
