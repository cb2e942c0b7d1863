// The official `openai` npm package, unmodified, against a running kvtier server.
// Run by NodeClientTest (JUnit), which starts the server and sets:
//   KVTIER_BASE_URL (…/v1), KVTIER_API_KEY, KVTIER_MODEL, KVTIER_FAULT_USER (the test-only fault hook's user).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const baseURL = process.env.KVTIER_BASE_URL;
const apiKey = process.env.KVTIER_API_KEY;
const model = process.env.KVTIER_MODEL;
const faultUser = process.env.KVTIER_FAULT_USER;
if (!baseURL || !apiKey || !model || !faultUser) {
  throw new Error('KVTIER_BASE_URL, KVTIER_API_KEY, KVTIER_MODEL and KVTIER_FAULT_USER must be set (NodeClientTest sets them)');
}
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60_000 });

const messages = (question) => [
  { role: 'system', content: 'You tell short stories about a little girl named Lily and her red ball in the park.' },
  { role: 'user', content: question },
];

test('chat: text, finish reason and usage', async () => {
  const r = await client.chat.completions.create({ model, messages: messages('What did Lily do?'), max_tokens: 12, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.choices[0].message.content.length > 0);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 12);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
});

test('chat: a repeated conversation reports cached tokens', async () => {
  const req = { model, messages: messages('Where did Lily and her friend Tom go on a sunny day?'), max_completion_tokens: 4, temperature: 0 };
  const first = await client.chat.completions.create(req);
  const second = await client.chat.completions.create(req);
  assert.equal(second.choices[0].message.content, first.choices[0].message.content);
  assert.ok(second.usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(second.usage));
});

test('chat streaming: role first, finish reason last, usage chunk', async () => {
  const stream = await client.chat.completions.create({
    model, messages: messages('Tell me about the ball.'), max_tokens: 16, temperature: 0,
    stream: true, stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const withChoices = chunks.filter((c) => c.choices.length > 0);
  const last = withChoices[withChoices.length - 1];
  assert.ok(['stop', 'length'].includes(last.choices[0].finish_reason));
  for (const c of withChoices.slice(0, -1)) assert.equal(c.choices[0].finish_reason, null);
  const text = withChoices.map((c) => c.choices[0].delta.content ?? '').join('');
  assert.ok(text.length > 0);
  const usage = chunks[chunks.length - 1];
  assert.deepEqual(usage.choices, []);
  assert.ok(usage.usage.completion_tokens >= 1 && usage.usage.completion_tokens <= 16);
});

test('completions: text, finish reason and usage', async () => {
  const r = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 20, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.ok(r.choices[0].text.length > 0);
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.equal(r.usage.prompt_tokens, 5);
});

test('completions streaming: the same text as without streaming', async () => {
  const whole = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 20, temperature: 0 });
  const stream = await client.completions.create({
    model, prompt: 'Once upon a time', max_tokens: 20, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const c of stream) {
    if (c.choices.length > 0) {
      text += c.choices[0].text;
      finish = c.choices[0].finish_reason ?? finish;
    } else {
      usage = c.usage;
    }
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, whole.choices[0].finish_reason);
  assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
});

test('an injected mid-stream error reaches the caller as an error', async () => {
  const stream = await client.chat.completions.create({
    model, messages: messages('Go on.'), max_tokens: 64, temperature: 0, stream: true, user: faultUser,
  });
  await assert.rejects(async () => {
    for await (const c of stream) { /* drain */ }
  }, (e) => e instanceof OpenAI.APIError && /injected mid-stream failure/.test(e.message));
});

test('bad requests: wrong key 401, n=2 400, unknown model 404', async () => {
  const wrong = new OpenAI({ baseURL, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(wrong.models.list(), (e) => e instanceof OpenAI.AuthenticationError);
  await assert.rejects(client.completions.create({ model, prompt: 'x', n: 2 }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === 'n');
  await assert.rejects(client.completions.create({ model: 'no-such-model', prompt: 'x' }),
    (e) => e instanceof OpenAI.NotFoundError);
});
