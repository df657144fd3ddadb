// The official OpenAI Node SDK against the platform's chat completions: structured outputs through the SDK's own
// zodResponseFormat helper (nested objects and enums, parsed by chat.completions.parse), log probabilities, n choices
// and seed. Usage: node chat.mjs <baseURL ending in /v1> <api key> <model>. Prints one JSON object of what the SDK saw.
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });

const Pet = z.object({
  name: z.string().min(1).max(10),
  kind: z.enum(['cat', 'dog', 'bird']),
  owner: z.object({ town: z.string().max(10), age: z.number().int().min(0).max(120) }),
  born: z.number().int(),
  friendly: z.boolean(),
});
const format = zodResponseFormat(Pet, 'pet');

const parsed = await client.chat.completions.parse({
  model,
  messages: [{ role: 'user', content: 'Describe a pet as JSON.' }],
  response_format: format,
  max_completion_tokens: 300,
  temperature: 0,
});
const choice = parsed.choices[0];

const withLogprobs = await client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Tell me about a cat.' }],
  max_completion_tokens: 8,
  temperature: 0,
  logprobs: true,
  top_logprobs: 3,
});

const seeded = (seed) => client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Tell me about a dog.' }],
  max_completion_tokens: 12,
  temperature: 1,
  seed,
  n: 3,
});
const first = await seeded(42);
const again = await seeded(42);

console.log(JSON.stringify({
  schema: format.json_schema.schema,
  finish_reason: choice.finish_reason,
  content: choice.message.content,
  parsed: choice.message.parsed ?? null,
  logprobs: withLogprobs.choices[0].logprobs?.content ?? null,
  logprobs_text: withLogprobs.choices[0].message.content,
  n_texts: first.choices.map((c) => c.message.content),
  n_indexes: first.choices.map((c) => c.index),
  n_again: again.choices.map((c) => c.message.content),
  n_usage: first.usage,
}));
