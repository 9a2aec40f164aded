// Loads OB1's OpenClaw plugin as OpenClaw does (register(api)), checks each tool call against the tool's own
// parameter schema (as OpenClaw validates tool input), and runs the plugin's tools and memory hooks against
// OB1_ENDPOINT. Prints one JSON summary; exits 1 on the first failed check. docs/ob1.md "Verified with OB1's own
// clients": copy this file into a copy of the plugin (its typebox installed, OpenClaw's two SDK entry points stood
// in under node_modules/openclaw), then
//   PLUGIN_MODULE=./dist/index.js OB1_ENDPOINT=http://127.0.0.1:8787/ob1 OB1_KEY=akb_... OB1_WORKSPACE=W \
//   node openclaw_drive.mjs
import { Value } from "typebox/value";
const entry = (await import(process.env.PLUGIN_MODULE || "./dist/index.js")).default;

const tools = {};
let corpus = null;
let prompt = null;
const api = {
  pluginConfig: { endpoint: process.env.OB1_ENDPOINT, accessKey: process.env.OB1_KEY,
                  workspaceId: process.env.OB1_WORKSPACE, projectId: "openclaw-plugin-run" },
  config: {},
  registerTool(tool) { tools[tool.name] = tool; },
  registerMemoryPromptSupplement(fn) { prompt = fn; },
  registerMemoryCorpusSupplement(c) { corpus = c; },
};
entry.register(api);
const checks = {};
function check(name, ok, detail) {
  checks[name] = ok ? "passed" : `FAILED ${JSON.stringify(detail).slice(0, 400)}`;
  if (!ok) { console.log(JSON.stringify({ ok: false, checks }, null, 2)); process.exit(1); }
}
async function call(name, params) {
  const tool = tools[name];
  if (!Value.Check(tool.parameters, params)) throw new Error(`${name}: params rejected by its own schema`);
  const result = await tool.execute("call-1", params);
  return result.details;
}

const run = process.env.RUN_ID || "oc1";
check("registered", Object.keys(tools).length === 7, Object.keys(tools));
checks.memory_hooks = corpus && prompt ? "registered" : "absent from this build";
const written = await call("openbrain_writeback", {
  schema_version: "openbrain.openclaw.writeback.v1", workspace_id: process.env.OB1_WORKSPACE,
  task_id: `openclaw-${run}`, idempotency_key: `openclaw-${run}`, content_hash: `openclaw-run-${run}-0000000000`,
  runtime: { name: "openclaw", version: "2026.3.24" },
  models_used: [{ provider: "anthropic", model: "claude", role: "implementation" }],
  source_refs: [{ kind: "repo", uri: "repo://example/app", title: "app" }],
  memory_payload: {
    decisions: [`OpenClaw run ${run}: deploy through the blue-green pipeline only.`],
    outputs: [`OpenClaw run ${run}: shipped the billing export fix.`],
    lessons: [`OpenClaw run ${run}: the billing export needs the UTC cutoff.`],
    unresolved_questions: [], next_steps: [`OpenClaw run ${run}: watch the export job tonight.`],
    artifacts: [{ kind: "pr", uri: "https://example.invalid/pr/42", description: "billing export PR" }],
    entities: { repos: ["example/app"], topics: ["billing export"] },
  },
  retention: { stale_after_days: 30 }, visibility: { workspace: "shared", project: "shared", channel: "none" },
});
const ids = written.memories.map((m) => m.memory_id);
check("writeback", ids.length === 5 && written.memories.every((m) => m.use_policy.requires_user_confirmation), written);
const gated = await call("openbrain_recall", { query: `billing export ${run}`, task_type: "coding" });
check("recall_gates_pending", gated.request_id && gated.memories.every((m) => !ids.includes(m.memory_id)), gated);
const recall = await call("openbrain_recall", {
  query: `billing export UTC cutoff ${run}`, task_type: "coding", scope: { include_unconfirmed: true },
  entities: { topics: ["billing export"] }, limits: { max_items: 5, max_tokens: 2000 } });
const recalled = recall.memories.map((m) => m.memory_id);
check("recall_unconfirmed", recalled.some((id) => ids.includes(id)), recall);
const used = recalled.find((id) => ids.includes(id));
const usage = await call("openbrain_report_usage", { request_id: recall.request_id, used_memory_ids: [used],
  ignored: recalled.filter((id) => id !== used).slice(0, 1).map((memory_id) => ({ memory_id, reason: "n/a" })) });
check("report_usage", usage.ok === true, usage);
const queue = await call("openbrain_list_review_queue", {});
check("review_queue", ids.every((id) => queue.memories.some((m) => m.memory_id === id)), queue);
const reviewed = await call("openbrain_review_memory", { memory_id: used, action: "confirm", actor_label: "plugin run" });
check("review_confirm", reviewed.memory.review_status === "confirmed" && reviewed.memory.can_use_as_instruction, reviewed);
const inspected = await call("openbrain_inspect_memory", { memory_id: used });
check("inspect", inspected.memory.id === used && inspected.memory.review_history.length === 1, inspected);
const trace = await call("openbrain_get_recall_trace", { request_id: recall.request_id });
check("trace", trace.items.some((i) => i.memory_id === used && i.used === true), trace);
const confirmed = await call("openbrain_recall", { query: `billing export UTC cutoff ${run}`, task_type: "coding" });
check("confirmed_recalled", confirmed.memories.some((m) => m.memory_id === used), confirmed);
if (corpus && prompt) {
const block = prompt({ availableTools: new Set(Object.keys(tools)) });
check("prompt_supplement", block.length > 0, block);
const hits = await corpus.search({ query: `billing export UTC cutoff ${run}`, maxResults: 5 });
check("corpus_search", hits.length > 0 && hits[0].corpus === "openbrain", hits);
const doc = await corpus.get({ lookup: `openbrain://memory/${used}` });
check("corpus_get", doc !== null, doc);
var hooks = { corpus_get: doc, corpus_hit: hits[0] };
}
let refused = null;
try { await call("openbrain_writeback", { schema_version: "openbrain.openclaw.writeback.v1", workspace_id: "x",
  memory_payload: { lessons: ["password = 'hunter2hunter2hunter2'"] } }); } catch (e) { refused = String(e); }
check("unsafe_blocked", refused && refused.includes("422") && refused.includes("Unsafe write-back blocked"), refused);
console.log(JSON.stringify({ ok: true, checks, ...(typeof hooks === "undefined" ? {} : hooks) }, null, 2));
