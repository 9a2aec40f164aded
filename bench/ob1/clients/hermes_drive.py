"""Runs OB1's Hermes memory provider (unmodified) through a Hermes session against OPENBRAIN_URL: the two Hermes
modules it imports are stubbed (as its own tests do); every HTTP call it makes is recorded, failures included
(the provider swallows them). docs/ob1.md "Verified with OB1's own clients".

    HERMES_PLUGINS_DIR=/tmp/hermes-run/plugins  # holds a copy of OB1's integrations/hermes-agent-memory/plugin as ob1/
    HERMES_HOME=/tmp/hermes-run/home OPENBRAIN_URL=http://127.0.0.1:8787/ob1 OPENBRAIN_WORKSPACE_ID=W \
    OPENBRAIN_KEY=akb_... python -m bench.ob1.clients.hermes_drive
"""
import importlib.util
import json
import os
import sys
import types
from pathlib import Path

stub_agent, stub_mp = types.ModuleType("agent"), types.ModuleType("agent.memory_provider")
class MemoryProvider:  # Hermes' base class: the provider overrides every hook
    pass
stub_mp.MemoryProvider = MemoryProvider
stub_tools, stub_reg = types.ModuleType("tools"), types.ModuleType("tools.registry")
stub_reg.tool_error = lambda msg: json.dumps({"error": msg})
sys.modules.update({"agent": stub_agent, "agent.memory_provider": stub_mp, "tools": stub_tools,
                    "tools.registry": stub_reg})


def load_plugin(directory: str) -> types.ModuleType:
    """The copy of the plugin in `directory`/ob1/, imported as the package `ob1` (its own imports of ob1.* and
    relative ones resolve inside that folder)."""
    init = Path(directory) / "ob1" / "__init__.py"
    spec = importlib.util.spec_from_file_location("ob1", init, submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None:
        raise SystemExit(f"no plugin package at {init.parent}")
    module = sys.modules["ob1"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ob1 = load_plugin(os.environ["HERMES_PLUGINS_DIR"])  # the directory holding a copy of the plugin as ob1/

calls = []
real = ob1._OB1Client._request
def recording(self, method, path, *, body=None):
    entries = sum(len(v) for k, v in (body or {}).get("memory_payload", {}).items() if k != "entities")
    try:
        out = real(self, method, path, body=body)
        calls.append((method, path.split("?")[0], "ok", entries))
        return out
    except Exception as exc:
        calls.append((method, path.split("?")[0], str(exc)[:300], entries))
        raise
ob1._OB1Client._request = recording

home = os.environ["HERMES_HOME"]
with open(f"{home}/ob1.json", "w") as config:
    json.dump({"endpoint": os.environ["OPENBRAIN_URL"], "workspace_id": os.environ["OPENBRAIN_WORKSPACE_ID"]}, config)
p = ob1.OB1MemoryProvider()
checks = {}
checks["available"] = p.is_available()
p.initialize("hermes-session-1", hermes_home=home, platform="cli", agent_identity="default")
checks["system_prompt_block"] = bool(p.system_prompt_block())
p.on_turn_start(1, "How do we deploy the billing service?", model="claude-sonnet", provider="anthropic")
first = p.prefetch("How do we deploy the billing service?")
p.sync_turn("How do we deploy the billing service safely on Fridays?",
            "We decided to deploy the billing service with the blue-green pipeline and a canary step.")
p._sync_thread.join(30)
# A long session: ten findings in each of the six categories the provider extracts (its session-end maximum)
lines = []
for i in range(10):
    lines += [f"We decided to use region eu-west-{i} for billing shard {i}.",
              f"Shard {i} must not exceed 500 connections at peak.",
              f"The export job for shard {i} failed with a timeout error last night.",
              f"Next step: review the retry policy for shard {i} tomorrow.",
              f"Lesson learned: never rotate shard {i} keys during the batch window.",
              f"It is still unclear who owns the shard {i} alert runbook?"]
messages = [{"role": "user", "content": "Summarise the billing work."},
            {"role": "assistant", "content": "\n".join(lines)}]
p.on_session_end(messages)
second = p.prefetch("billing shard export timeout retry policy")
checks["prefetch_recalls_session_memories"] = "shard" in second
recall = json.loads(p.handle_tool_call("ob1_recall", {"query": "billing shard connections"}))
ids = [m["memory_id"] for m in recall.get("memories", [])]
checks["tool_recall"] = bool(ids)
checks["tool_search"] = "error" not in json.loads(p.handle_tool_call("ob1_search", {"query": "blue-green canary"}))
wrote = json.loads(p.handle_tool_call("ob1_writeback", {"summary": "Billing deploys", "content":
                                                           "Billing deploys go through blue-green with a canary."}))
checks["tool_writeback"] = "error" not in wrote
used = json.loads(p.handle_tool_call("ob1_report_usage", {"request_id": recall["request_id"], "used": ids[:1],
                                                          "ignored": ids[1:2]}))
checks["tool_report_usage"] = used.get("ok") is True
queue = json.loads(p.handle_tool_call("ob1_list_review_queue", {}))
checks["tool_review_queue"] = len(queue.get("memories", [])) >= 60
reviewed = json.loads(p.handle_tool_call("ob1_review_memory", {"memory_id": ids[0], "action": "confirm"}))
checks["tool_review_memory"] = reviewed.get("memory", {}).get("review_status") == "confirmed"
trace = json.loads(p.handle_tool_call("ob1_get_recall_trace", {"request_id": recall["request_id"]}))
checks["tool_recall_trace"] = any(i.get("used") for i in trace.get("items", []))
checks["pre_compress"] = bool(p.on_pre_compress(messages))
p.shutdown()
failed = [c for c in calls if c[2] != "ok"]
largest = max(c[3] for c in calls if c[1] == "/writeback")
print(json.dumps({"ok": all(checks.values()) and not failed, "checks": checks, "http_calls": len(calls),
                  "failed_calls": failed, "largest_writeback_entries": largest,
                  "routes": sorted({f"{m} {path}" for m, path, _, _ in calls})}, indent=2))
sys.exit(0 if all(checks.values()) and not failed else 1)
