// Greedy decode and prefill speed of llama.cpp (the prebuilt CPU build shipped by node-llama-cpp) on a
// GGUF file, measured the way the engine's `bench --batch 1` measures its own: one sequence, a prompt of
// P fixed token ids (BOS, then ids drawn from a seeded generator inside the vocabulary), then G greedy
// tokens; R measured repeats after one warm-up run. Prints one JSON line on stdout, progress on stderr.
//
//   node bench.mjs --model /tmp/110M.gguf [--threads 2] [--prompt-tokens 128] [--gen-tokens 64]
//                  [--repeats 3] [--warmup 1] [--flash-attention off|on|auto]
//
// prefill_tok_s: P / (time from handing the prompt to llama.cpp until the first generated token).
// decode_tok_s:  (G - 1) / (time from the first generated token to the G-th), i.e. one-token decode
//                steps per second; the prompt evaluation is not part of it. Every generated token is
//                fed back, end-of-generation tokens included (like the engine's bench, which ignores EOS).
import {basename} from "node:path";
import {parseArgs} from "node:util";
import {getLlama, getModuleVersion, LlamaLogLevel} from "node-llama-cpp";

const {values: opt, positionals} = parseArgs({
    allowPositionals: true,
    options: {
        model: {type: "string"},
        threads: {type: "string", default: "2"},
        "prompt-tokens": {type: "string", default: "128"},
        "gen-tokens": {type: "string", default: "64"},
        repeats: {type: "string", default: "3"},
        warmup: {type: "string", default: "1"},
        "flash-attention": {type: "string", default: "off"},
        seed: {type: "string", default: "1234"},
        help: {type: "boolean", short: "h"}
    }
});
const usage = "usage: node bench.mjs --model FILE.gguf [--threads 2] [--prompt-tokens 128] [--gen-tokens 64] "
    + "[--repeats 3] [--warmup 1] [--flash-attention off|on|auto] [--seed 1234]";
if (opt.help) {
    console.log(usage);
    process.exit(0);
}
const modelPath = opt.model ?? positionals[0];
const int = (name, min) => {
    const v = Number(opt[name]);
    if (!Number.isInteger(v) || v < min) {
        console.error(`--${name} must be an integer >= ${min}\n${usage}`);
        process.exit(2);
    }
    return v;
};
if (modelPath == null) {
    console.error(usage);
    process.exit(2);
}
const threads = int("threads", 1);
const promptTokens = int("prompt-tokens", 1);
const genTokens = int("gen-tokens", 2);
const repeats = int("repeats", 1);
const warmup = int("warmup", 0);
let seed = int("seed", 0);
const flashAttention = {off: false, on: true, auto: "auto"}[opt["flash-attention"]];
if (flashAttention === undefined) {
    console.error(`--flash-attention must be off, on or auto\n${usage}`);
    process.exit(2);
}

const bindingVersion = await getModuleVersion();

// CPU only, prebuilt binaries only (never a build from source), at most `threads` threads
const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    progressLogs: false,
    skipDownload: true,
    maxThreads: threads,
    logLevel: LlamaLogLevel.error
});
const release = llama.llamaCppRelease;
console.error(`llama.cpp ${release.release} (${release.repo}), ${llama.buildType} CPU build via node-llama-cpp `
    + `${bindingVersion}, ${threads} threads`);
console.error(`llama.cpp system info: ${llama.systemInfo.trim()}`);

const model = await llama.loadModel({modelPath, gpuLayers: 0, useMlock: false});
const meta = model.fileInfo;
const embd = meta.tensorInfo?.find((t) => t.name === "token_embd.weight");
const vocab = meta.architectureMetadata?.vocab_size
    ?? meta.metadata?.tokenizer?.ggml?.tokens?.length
    ?? (embd != null ? Number(embd.dimensions[1]) : undefined);
if (!(vocab > 3)) {
    throw new Error("cannot tell the vocabulary size of " + modelPath);
}
const bos = model.tokens.bos ?? 1;
const window = promptTokens + genTokens;
if (model.trainContextSize != null && window > model.trainContextSize) {
    throw new Error(`prompt ${promptTokens} + gen ${genTokens} tokens exceed the model's context ${model.trainContextSize}`);
}

// one sequence, the whole prompt in one batch, no speculative decoding (no token predictor),
// no performance counters, no context shift (the window holds prompt + generated tokens)
const context = await model.createContext({
    sequences: 1,
    contextSize: window,
    batchSize: promptTokens,
    threads,
    flashAttention,
    performanceTracking: false
});
const sequence = context.getSequence();

// xorshift32: the same prompts for the same --seed, ids in [3, vocab) after BOS (as the engine's bench)
const nextRandom = () => {
    seed ^= seed << 13;
    seed >>>= 0;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    seed >>>= 0;
    return seed;
};
seed = (seed >>> 0) || 1;
const prompt = () => {
    const ids = [bos];
    while (ids.length < promptTokens) {
        ids.push(3 + (nextRandom() % (vocab - 3)));
    }
    return ids;
};

const now = () => Number(process.hrtime.bigint()) / 1e9;

async function runOnce() {
    await sequence.clearHistory();
    const ids = prompt();
    const stamps = [];
    const t0 = now();
    // greedy (temperature 0 selects llama.cpp's greedy sampler alone), no penalties, no grammar, no bias
    for await (const token of sequence.evaluate(ids, {temperature: 0, yieldEogToken: true})) {
        stamps.push(now());
        if (token == null || stamps.length >= genTokens) {
            break;
        }
    }
    if (stamps.length < genTokens) {
        throw new Error(`generated ${stamps.length} of ${genTokens} tokens`);
    }
    return {
        prefill: promptTokens / (stamps[0] - t0),
        decode: (genTokens - 1) / (stamps[genTokens - 1] - stamps[0])
    };
}

for (let i = 0; i < warmup; i++) {
    await runOnce();
    console.error(`warm-up ${i + 1}/${warmup} done`);
}
const decode = [];
const prefill = [];
for (let r = 0; r < repeats; r++) {
    const {prefill: p, decode: d} = await runOnce();
    prefill.push(p);
    decode.push(d);
    console.error(`repeat ${r + 1}/${repeats}: prefill ${p.toFixed(1)} tok/s, decode ${d.toFixed(2)} tok/s`);
}
const usedThreads = context.currentThreads;

const median = (xs) => {
    const a = [...xs].sort((x, y) => x - y);
    return a.length % 2 === 1 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};
const round = (x) => Math.round(x * 1000) / 1000;
console.log(JSON.stringify({
    engine: "llama.cpp",
    version: `${release.release}`,
    llama_cpp_repo: release.repo,
    build: `${llama.buildType} cpu`,
    node_llama_cpp: bindingVersion,
    model: basename(modelPath),
    vocab,
    threads,
    threads_used: usedThreads,
    prompt_tokens: promptTokens,
    gen_tokens: genTokens,
    repeats,
    flash_attention: flashAttention,
    decode_tok_s: decode.map(round),
    decode_tok_s_median: round(median(decode)),
    decode_tok_s_range: [round(Math.min(...decode)), round(Math.max(...decode))],
    prefill_tok_s: prefill.map(round),
    prefill_tok_s_median: round(median(prefill)),
    prefill_tok_s_range: [round(Math.min(...prefill)), round(Math.max(...prefill))],
    node: process.versions.node
}));

await context.dispose();
await model.dispose();
await llama.dispose();
