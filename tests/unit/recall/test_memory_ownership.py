"""The pure ownership rules: the owner a write stores, and whose a recall trace is (issue 23 item 1)."""

from __future__ import annotations

import json

import pytest

from agentkb.errors import NotOwner
from agentkb.models.recall.trace import RecallTrace, decode_trace, encode_trace
from agentkb.services.memory.service import memory_owner

SHARED = ("channel", "project", "workspace", "organization")


@pytest.mark.parametrize("visibility", ("personal", *SHARED))
def test_owner_id_naming_another_principal_is_refused_on_every_visibility(visibility: str) -> None:
    with pytest.raises(NotOwner) as refused:
        memory_owner(visibility, "ann", "bob")
    assert refused.value.http_status == 403 and refused.value.code == "FORBIDDEN"
    assert refused.value.details == {"code": "OWNER_MISMATCH", "path": "owner_id"}  # the id is not echoed


def test_a_personal_memory_is_the_callers_and_a_shared_one_records_only_what_the_caller_said() -> None:
    assert memory_owner("personal", None, "bob") == memory_owner("personal", "bob", "bob") == "bob"
    assert [memory_owner(v, None, "bob") for v in SHARED] == [None] * 4
    assert [memory_owner(v, "bob", "bob") for v in SHARED] == ["bob"] * 4


def _trace(principal: str | None) -> RecallTrace:
    return RecallTrace("r", "w", principal, 1.0, {"query": "q"}, {}, ())


def test_a_trace_is_its_recallers_alone() -> None:
    assert _trace("ann").recalled_by("ann") and not _trace("ann").recalled_by("bob")
    assert decode_trace(encode_trace(_trace("ann"))).principal_id == "ann"


def test_a_trace_stored_without_its_principal_is_nobodys() -> None:
    stored = json.loads(encode_trace(_trace("ann")))
    del stored["principal_id"]  # the shape of a trace that never named its principal
    legacy = decode_trace(json.dumps(stored))
    assert legacy.principal_id is None and not any(legacy.recalled_by(p) for p in ("ann", "", "None"))
