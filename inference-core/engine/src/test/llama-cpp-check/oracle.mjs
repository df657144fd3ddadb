// llama.cpp (the prebuilt CPU build shipped by node-llama-cpp) as an independent oracle on a GGUF file:
// tokenization, teacher-forced next-token scores and greedy token streams. Reads one JSON request on
// stdin (or from the file named by the first argument), prints one JSON object on stdout; progress and
// llama.cpp's own log go to stderr.
//
// Request:
//   {"model": "/abs/file.gguf", "threads": 1, "kvCache": "F32", "contextSize": 512,
//    "ops": [
//      {"op": "tokenize", "text": "Hello", "special": false, "bos": false},
//      {"op": "teacherForced", "tokens": [1, 15, 7], "topK": 8},      // topK 0: every vocabulary entry
//      {"op": "greedy", "prompt": [1, 15], "maxTokens": 32, "stopAtEog": true}
//    ]}
// Response:
//   {"llamaCpp": {"release", "repo", "nodeLlamaCpp", "build"},
//    "model": {"vocab", "bos", "eos", "eot", "addBos"},
//    "results": [{"ids": [...]},
//                {"positions": [{"top": [[id, logprob], ...]} or {"logprobs": [...vocab order...]}, ...]},
//                {"ids": [...], "stoppedAtEog": true}]}
//
// Scores are log-probabilities: log(softmax(logits)). The binding hands out llama.cpp's softmax of the
// raw logits (the greedy sampler leaves them untouched) but not the logits themselves, so logits are
// known up to a per-position constant; differences between two tokens' scores are logit differences.
import {readFileSync} from "node:fs";
import {getLlama, getModuleVersion, LlamaLogLevel} from "node-llama-cpp";

const fail = (message) => {
    console.error("oracle.mjs: " + message);
    process.exit(2);
};

const request = (() => {
    const text = process.argv[2] != null ? readFileSync(process.argv[2], "utf8") : readFileSync(0, "utf8");
    try {
        return JSON.parse(text);
    } catch (e) {
        fail("request is not JSON: " + e.message);
    }
})();
if (typeof request.model !== "string") {
    fail("request.model must be the path of a GGUF file");
}
if (!Array.isArray(request.ops)) {
    fail("request.ops must be an array of operations");
}
const threads = request.threads ?? 1;
const kvCache = request.kvCache ?? "F32";
if (!["F32", "F16", "Q8_0"].includes(kvCache)) {
    fail("request.kvCache must be F32, F16 or Q8_0");
}

const tokenArray = (value, what) => {
    if (!Array.isArray(value) || value.length === 0 || !value.every((t) => Number.isInteger(t) && t >= 0)) {
        fail(what + " must be a non-empty array of token ids");
    }
    return value;
};

// CPU only, prebuilt binaries only (never a build from source or a download)
const llama = await getLlama({
    gpu: false,
    build: "never",
    usePrebuiltBinaries: true,
    progressLogs: false,
    skipDownload: true,
    maxThreads: threads,
    logLevel: LlamaLogLevel.error
});
const model = await llama.loadModel({modelPath: request.model, gpuLayers: 0, useMlock: false});
const embd = model.fileInfo.tensorInfo?.find((t) => t.name === "token_embd.weight");
const vocab = model.fileInfo.metadata?.tokenizer?.ggml?.tokens?.length
    ?? (embd != null ? Number(embd.dimensions[1]) : undefined);
if (!(vocab > 0)) {
    fail("cannot tell the vocabulary size of " + request.model);
}
const checkIds = (ids, what) => {
    const bad = ids.findIndex((t) => t >= vocab);
    if (bad >= 0) {
        fail(`${what}[${bad}] = ${ids[bad]} lies outside the ${vocab}-token vocabulary`);
    }
};

// the longest token sequence any operation evaluates fixes the window (no context shift may happen)
let longest = 1;
for (const op of request.ops) {
    if (op.op === "teacherForced") {
        checkIds(tokenArray(op.tokens, "teacherForced.tokens"), "teacherForced.tokens");
        longest = Math.max(longest, op.tokens.length);
    } else if (op.op === "greedy") {
        checkIds(tokenArray(op.prompt, "greedy.prompt"), "greedy.prompt");
        longest = Math.max(longest, op.prompt.length + (op.maxTokens ?? 0));
    }
}
// node-llama-cpp shifts the context (drops the oldest tokens) when a sequence fills it, even while
// evaluating without generating: keep room to spare
const contextSize = request.contextSize ?? longest + 16;
if (contextSize <= longest) {
    fail(`contextSize ${contextSize} must exceed the longest token sequence (${longest})`);
}
const context = await model.createContext({
    sequences: 1,
    contextSize,
    batchSize: contextSize,
    threads,
    flashAttention: false,
    // the engine keeps K and V in F32; llama.cpp's default F16 cache would round them (request "kvCache": "F16")
    experimentalKvCacheKeyType: kvCache,
    experimentalKvCacheValueType: kvCache,
    performanceTracking: false
});
const sequence = context.getSequence();

// greedy selection: llama.cpp's greedy sampler is the whole chain at temperature 0
const greedyOptions = {temperature: 0};

async function tokenize(op) {
    if (typeof op.text !== "string") {
        fail("tokenize.text must be a string");
    }
    const ids = Array.from(model.tokenize(op.text, op.special === true));
    if (op.bos === true) {
        if (model.tokens.bos == null) {
            fail("tokenize.bos: the model has no BOS token");
        }
        ids.unshift(model.tokens.bos);
    }
    return {ids};
}

async function teacherForced(op) {
    const tokens = op.tokens;
    const topK = op.topK ?? 8;
    if (!Number.isInteger(topK) || topK < 0) {
        fail("teacherForced.topK must be an integer >= 0 (0: the whole vocabulary)");
    }
    await sequence.clearHistory();
    // one batch over the whole sequence, scores after every position
    const input = tokens.map((t) => [t, {generateNext: {probabilities: true, options: greedyOptions}}]);
    const out = await sequence.controlledEvaluate(input);
    const positions = [];
    for (let i = 0; i < tokens.length; i++) {
        const probabilities = out[i]?.next?.probabilities;
        if (probabilities == null) {
            throw new Error("llama.cpp returned no scores at position " + i);
        }
        if (topK === 0) {
            const logprobs = new Array(vocab).fill(null);
            for (const [id, p] of probabilities) {
                logprobs[id] = Math.log(p);
            }
            positions.push({logprobs});
        } else {
            const top = [];
            for (const [id, p] of probabilities) {    // sorted, most probable first
                top.push([id, Math.log(p)]);
                if (top.length === topK) {
                    break;
                }
            }
            positions.push({top});
        }
    }
    return {positions};
}

async function greedy(op) {
    const maxTokens = op.maxTokens;
    if (!Number.isInteger(maxTokens) || maxTokens < 1) {
        fail("greedy.maxTokens must be an integer >= 1");
    }
    const stopAtEog = op.stopAtEog !== false;
    await sequence.clearHistory();
    const ids = [];
    let stoppedAtEog = false;
    for await (const token of sequence.evaluate(op.prompt, {...greedyOptions, yieldEogToken: true})) {
        ids.push(token);
        if (stopAtEog && model.isEogToken(token)) {
            stoppedAtEog = true;
            break;
        }
        if (ids.length >= maxTokens) {
            break;
        }
    }
    return {ids, stoppedAtEog};
}

const handlers = {tokenize, teacherForced, greedy};
const results = [];
for (const op of request.ops) {
    const handler = handlers[op.op];
    if (handler == null) {
        fail("unknown op '" + op.op + "' (known: " + Object.keys(handlers).join(", ") + ")");
    }
    results.push(await handler(op));
}

const release = llama.llamaCppRelease;
process.stdout.write(JSON.stringify({
    llamaCpp: {
        release: release.release,
        repo: release.repo,
        nodeLlamaCpp: await getModuleVersion(),
        build: llama.buildType + " cpu"
    },
    model: {
        vocab,
        bos: model.tokens.bos,
        eos: model.tokens.eos,
        eot: model.tokens.eot,
        addBos: model.tokens.shouldPrependBosToken
    },
    results
}) + "\n");

await context.dispose();
await model.dispose();
await llama.dispose();
