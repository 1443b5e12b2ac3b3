// speedscope_load.mjs — reads a profile with speedscope's own importer (npm package speedscope,
// the code its app runs when a file is opened: importProfileGroupFromText), as a real consumer
// of gputop's --folded and --timeline files. speedscope ships as a browser bundle only, so the
// bundle runs here in a bare context and its importer is taken from it (the app's rendering,
// which needs a browser, fails after that and is ignored).
// Usage: node speedscope_load.mjs FILE   (speedscope in ./node_modules beside this script)
// Prints {"name", "profiles": [{"name", "total", "unit", "frames": [...]}]}; exits 1 when
// speedscope does not recognize the file, 3 when the bundle is not one this script knows.
import fs from 'node:fs';
import vm from 'node:vm';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const bundleDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules/speedscope/dist/release');
const file = process.argv[2];
const bundle = fs.readdirSync(bundleDir).find(f => /^speedscope-.*\.js$/.test(f));
let src = fs.readFileSync(bundleDir + '/' + bundle, 'utf8');
const m = src.match(/async function \w+\(\w+,\w+\)\{return\(await (\w+)\)\.importProfileGroupFromText\(/);
if (!m) { console.error('speedscope_load: no importProfileGroupFromText in ' + bundle); process.exit(3); }
const def = new RegExp('var ' + m[1] + '=Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>\\(\\w+\\(\\),\\w+\\)\\);');
const d = src.match(def);
if (!d) { console.error('speedscope_load: cannot find the importer module in ' + bundle); process.exit(3); }
src = src.replace(d[0], d[0] + 'globalThis.__speedscopeImporter=' + m[1] + ';');
const handler = { get: (t, p) => p in t ? t[p] : (p === Symbol.toPrimitive ? () => '' : new Proxy(function () {}, handler)), apply: () => new Proxy(function () {}, handler), construct: () => new Proxy({}, handler) };
const stub = new Proxy(function () {}, handler);
const ctx = { console: new console.Console(process.stderr), setTimeout, clearTimeout, Promise, TextDecoder, TextEncoder, Uint8Array, ArrayBuffer, DataView, Map, Set, WeakMap, Math, JSON, Date, Error, Symbol, Object, Array, String, Number, Boolean, RegExp, parseInt, parseFloat, isNaN, Float32Array, Float64Array, Int32Array, Uint32Array, Uint16Array, Int8Array, Int16Array, Uint8ClampedArray, BigInt, atob, btoa, queueMicrotask, URL, URLSearchParams };
ctx.window = ctx; ctx.self = ctx; ctx.globalThis = ctx;
ctx.document = stub; ctx.navigator = { userAgent: 'node', platform: 'linux' }; ctx.location = { hash: '', search: '', href: 'file:///', protocol: 'file:' };
ctx.localStorage = { getItem: () => null, setItem() {} }; ctx.addEventListener = () => {}; ctx.removeEventListener = () => {};
ctx.matchMedia = () => ({ matches: false, addEventListener() {}, addListener() {} }); ctx.requestAnimationFrame = () => 0;
vm.createContext(ctx);
try { vm.runInContext(src, ctx); } catch (e) { /* the app's rendering needs a browser; the importer is already there */ }
if (!ctx.__speedscopeImporter) { console.error('importer not reached'); process.exit(3); }
const imp = await ctx.__speedscopeImporter;
const group = await imp.importProfileGroupFromText(file.split('/').pop(), fs.readFileSync(file, 'utf8'));
if (!group) { console.error('speedscope: unrecognized format'); process.exit(1); }
const out = { name: group.name, profiles: group.profiles.map(p => {
  const frames = new Set(); p.forEachFrame(f => frames.add(f.name));
  return { name: p.getName(), total: p.getTotalWeight(), unit: p.getWeightUnit(), frames: [...frames] };
}) };
process.stdout.write(JSON.stringify(out) + '\n');
