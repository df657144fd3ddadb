// The official OpenAI Node SDK against the platform's Responses API: one call without streaming, one streamed;
// then a forced function call on chat and on responses.
// Usage: node responses.mjs <baseURL ending in /v1> <api key> <model>. Prints one JSON object of what the SDK saw.
import OpenAI from 'openai';

const [baseURL, apiKey, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const params = {
  model,
  instructions: 'You tell stories.',
  input: [{ role: 'user', content: [{ type: 'input_text', text: 'Tell me about a cat.' }] }],
  max_output_tokens: 20,
  temperature: 0,
  store: false,
};

const response = await client.responses.create(params);

const types = [];
const sequence = [];
let streamed = '';
let final = null;
const stream = await client.responses.create({ ...params, stream: true });
for await (const event of stream) {
  types.push(event.type);
  sequence.push(event.sequence_number);
  if (event.type === 'response.output_text.delta') {
    streamed += event.delta;
  }
  if (event.type === 'response.completed' || event.type === 'response.incomplete') {
    final = event.response;
  }
}

let refused = null;
try {
  await client.responses.create({ ...params, store: true });
} catch (e) {
  refused = { status: e.status, param: e.param ?? e.error?.param ?? null };
}

// function tools: a forced call on chat and on responses
const weather = {
  type: 'object',
  properties: { city: { type: 'string', maxLength: 6 } },
  required: ['city'],
  additionalProperties: false,
};
const chatTool = await client.chat.completions.create({
  model,
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
  max_tokens: 60,
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather } }],
  tool_choice: 'required',
});
const chatCall = chatTool.choices[0].message.tool_calls?.[0];
const responseTool = await client.responses.create({
  model,
  input: 'Weather in Paris?',
  max_output_tokens: 60,
  store: false,
  tools: [{ type: 'function', name: 'get_weather', parameters: weather, strict: true }],
  tool_choice: 'required',
});
const responseCall = responseTool.output.find((item) => item.type === 'function_call');

console.log(JSON.stringify({
  id: response.id,
  status: response.status,
  output_text: response.output_text,
  usage: response.usage,
  receipt: response.pagewarden_receipt ?? null,
  types,
  sequence,
  streamed,
  final_status: final?.status ?? null,
  final_receipt: final?.pagewarden_receipt ?? null,
  refused,
  chat_call: chatCall ? {
    finish_reason: chatTool.choices[0].finish_reason,
    id: chatCall.id,
    name: chatCall.function.name,
    arguments: chatCall.function.arguments,
  } : null,
  response_call: responseCall ? {
    call_id: responseCall.call_id,
    name: responseCall.name,
    arguments: responseCall.arguments,
  } : null,
}));
