// Tokenizes texts with llama.cpp itself (the prebuilt CPU build shipped by node-llama-cpp), loading
// only the vocabulary of a GGUF file, and prints the ids as JSON: the reference for how Pagewarden
// reads a GGUF tokenizer. No BOS is added; "special": false keeps control-token spellings as text.
// Usage: node llama-tokenize.mjs FILE.gguf < {"jobs": [{"special": bool, "texts": [...]}]}
import { readFileSync } from "node:fs";
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const [modelPath] = process.argv.slice(2);
if (!modelPath) {
  throw new Error("usage: node llama-tokenize.mjs FILE.gguf < jobs.json");
}
const input = JSON.parse(readFileSync(0, "utf8"));
const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, progressLogs: false,
  logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath, vocabOnly: true, gpuLayers: 0 });
const out = input.jobs.map((job) => job.texts.map((t) => Array.from(model.tokenize(t, job.special))));
process.stdout.write(JSON.stringify(out));
await model.dispose();
await llama.dispose();
