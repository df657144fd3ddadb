// Renders chat templates with @huggingface/jinja, the engine transformers.js uses, as an oracle.
// Usage: node render.mjs JOB.json  where JOB is
//   {"template": "...", "bos_token": "...", "eos_token": "...",
//    "cases": [{"messages": [{"role": "...", "content": "..."}], "add_generation_prompt": true}]}
// A case may carry its own "template", and extra template variables in "variables" (e.g. {"enable_thinking": false}). Prints a JSON array, one entry per case: {"text": "..."} or {"error": "..."}.
import { readFileSync } from "node:fs";
import { Template } from "@huggingface/jinja";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const shared = job.template == null ? null : new Template(job.template);
const out = job.cases.map((c) => {
  try {
    const template = c.template == null ? shared : new Template(c.template);
    return {
      text: template.render({
        ...(c.variables ?? {}),
        messages: c.messages,
        add_generation_prompt: c.add_generation_prompt,
        bos_token: job.bos_token ?? "",
        eos_token: job.eos_token ?? "",
      }),
    };
  } catch (e) {
    return { error: String(e.message ?? e) };
  }
});
process.stdout.write(JSON.stringify(out));
