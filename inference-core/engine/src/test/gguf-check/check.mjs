// Independent GGUF check: reads a local GGUF file with @huggingface/gguf (not our reader) and prints
// its header as one JSON object on stdout, so a JUnit test can compare it with what our writer wrote.
// Usage: node check.mjs FILE.gguf
import { gguf } from "@huggingface/gguf";
import path from "node:path";

const file = process.argv[2];
if (!file) {
  console.error("usage: node check.mjs FILE.gguf");
  process.exit(2);
}

const { typedMetadata, tensorInfos, tensorDataOffset } = await gguf(path.resolve(file), {
  typedMetadata: true,
  allowLocalFile: true,
});

// JSON has no bigint: numbers that fit exactly become numbers, larger ones become strings.
const plain = (v) => {
  if (typeof v === "bigint") {
    return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  }
  if (Array.isArray(v)) return v.map(plain);
  return v;
};

const metadata = {};
for (const [key, entry] of Object.entries(typedMetadata)) {
  metadata[key] = { type: entry.type, subType: entry.subType ?? null, value: plain(entry.value) };
}

const tensors = tensorInfos.map((t) => ({
  name: t.name,
  shape: t.shape.map(plain),
  dtype: t.dtype,
  offset: plain(t.offset),
}));

process.stdout.write(JSON.stringify({ tensorDataOffset: plain(tensorDataOffset), metadata, tensors }));
process.stdout.write("\n");
