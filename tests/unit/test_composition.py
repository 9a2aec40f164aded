"""The composition root: one frozen bundle of ports, built lazily by the builder the settings choose."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkb.adapters.aws.builder import AwsBuilder
from agentkb.adapters.embedded.basics import LocalObjectReader
from agentkb.adapters.embedded.builder import EmbeddedBuilder
from agentkb.composition import Ports, build_ports, get_ports
from agentkb.config import get_settings
from agentkb.errors import BadRequest, NotFound
from agentkb.ports.bundle import PortSet, builds, declared_ports

PORTS = [port.name for port in declared_ports()]


def test_the_settings_choose_one_builder(data_dir: Path) -> None:
    settings = get_settings()
    assert isinstance(build_ports(settings).builder, EmbeddedBuilder)
    assert isinstance(build_ports(settings.model_copy(update={"backend": "aws"})).builder, AwsBuilder)


def test_the_builder_names_its_engine(data_dir: Path) -> None:
    # The labels callers show (/health's backend, recall's backend_invoked) come from the builder, not the settings
    settings = get_settings()
    embedded, aws = build_ports(settings), build_ports(settings.model_copy(update={"backend": "aws"}))
    assert (embedded.engine.name, embedded.engine.embeddings, embedded.engine.indexes_in_process) == (
        "embedded", "local", True)
    assert (aws.engine.name, aws.engine.embeddings, aws.engine.indexes_in_process) == ("aws", "bedrock", False)
    assert embedded.with_settings(settings.model_copy(update={"backend": "aws"})).engine.name == "embedded"


def test_every_port_of_the_bundle_is_built_by_both_builders() -> None:
    for builder in (EmbeddedBuilder, AwsBuilder):
        assert [name for name in PORTS if not callable(getattr(builder, name, None))] == [], builder
    assert all(getattr(Ports, name) is getattr(PortSet, name) for name in PORTS)  # the bundle adds none of its own


def test_a_builder_method_is_named_after_its_port() -> None:
    # The bundle finds a port's builder by the port's name: a mismatch fails when the builder class is defined
    with pytest.raises(TypeError, match="'objects' must be named 'objects', not 'reader'"):
        class Misnamed:
            @builds(PortSet.objects)
            def reader(self, ports: Ports) -> LocalObjectReader:
                return LocalObjectReader(Path("."))


def test_nothing_is_opened_before_first_use(data_dir: Path) -> None:
    # Given a fresh bundle on the embedded engine
    ports = get_ports()
    # Then no database file exists until a port that needs it is used
    assert not ports.settings.database_path.exists()
    assert ports.reranker.rerank("q", ["p"], "m").status == "unavailable"
    assert not ports.settings.database_path.exists()
    ports.catalog.list_knowledge_bases("ws1")
    assert ports.settings.database_path.exists()


def test_the_embedded_engine_builds_its_own_adapters(data_dir: Path) -> None:
    ports = get_ports()
    names = {name: type(getattr(ports, name)).__name__ for name in PORTS}
    assert names == {"catalog": "SqliteCatalog", "index": "SqliteIndex", "embedder": "LocalEmbedder",
                     "tokenizer": "WordPieceTokenizer", "reranker": "UnavailableReranker", "keys": "SqliteKeyStore",
                     "secrets": "FileSecretStore", "rate_limiter": "SqliteRateLimiter",
                     "embedding_cache": "SqliteEmbeddingCache", "snapshots": "SqliteSnapshotStore",
                     "memories": "SqliteMemoryStore", "graph": "SqliteGraphStore",
                     "idempotency": "PowertoolsIdempotency", "objects": "LocalObjectReader", "deadline": "NoDeadline",
                     "indexing_queue": "SqliteIndexingQueue", "traces": "SqliteRecallTraceStore",
                     "archive": "SqliteWorkspaceArchive", "embedders": "LocalEmbedders",
                     "generations": "SqliteShadowGenerations", "chunks": "SqliteChunkPages"}


def test_a_port_is_built_once_and_the_bundle_is_frozen(data_dir: Path) -> None:
    ports = get_ports()
    assert ports.catalog is ports.catalog
    with pytest.raises(AttributeError, match="frozen"):
        ports.catalog = ports.catalog  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen"):
        del ports.index


def test_replace_swaps_ports_and_shares_the_built_ones(data_dir: Path) -> None:
    ports = get_ports()
    catalog = ports.catalog
    fake = LocalObjectReader(data_dir / "elsewhere")
    swapped = ports.replace(objects=fake)
    assert swapped.objects is fake and swapped.catalog is catalog
    assert ports.objects is not fake  # the original is untouched
    tuned = swapped.with_settings(ports.settings.model_copy(update={"embed_timeout_ms": 7}))
    assert tuned.settings.embed_timeout_ms == 7 and tuned.objects is fake and tuned.catalog is catalog
    with pytest.raises(TypeError):
        ports.replace(objcts=fake)  # type: ignore[call-arg]  # a misspelt port is refused, not silently kept


def test_local_objects_stay_inside_their_bucket(tmp_path: Path) -> None:
    reader = LocalObjectReader(tmp_path)
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "a.md").write_bytes(b"hello")
    assert reader.read_object("uploads", "a.md") == b"hello"
    with pytest.raises(NotFound):
        reader.read_object("uploads", "missing.md")
    for bucket, key in (("uploads", "../secret"), ("..", "x"), ("a/b", "x"), ("", "x")):
        with pytest.raises(BadRequest):
            reader.read_object(bucket, key)
