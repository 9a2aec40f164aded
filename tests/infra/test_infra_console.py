"""The console on the API's own stage: two public GET methods into the search function, nothing else."""

from __future__ import annotations

from infra import constants as c


def test_the_console_paths_are_public_gets_into_the_search_function(synthesized):
    api = synthesized.api_stack.service_api
    search_id = synthesized.api_stack.get_logical_id(
        synthesized.api_stack.functions.functions[c.CONSOLE_FUNCTION].node.default_child)
    seen = []
    for method in api.console_methods:
        cfn = synthesized.api_json["Resources"][synthesized.api_stack.get_logical_id(method.node.default_child)]
        props = cfn["Properties"]
        assert props["HttpMethod"] == "GET" and props["AuthorizationType"] == "NONE"
        assert props.get("ApiKeyRequired", False) is False
        assert props["Integration"]["Type"] == "AWS_PROXY" and search_id in str(props["Integration"]["Uri"])
        seen.append(method.resource.path)
    assert tuple(seen) == c.CONSOLE_PATHS


def test_the_code_asset_carries_the_console_files(tmp_path):
    """build_functions_asset copies agentkb/ with bundling._IGNORED: the console's files survive it."""
    import shutil

    from agentkb.console import static
    from infra import bundling

    shutil.copytree(static.ROOT, tmp_path / "console", ignore=bundling._IGNORED)
    shipped = {p.relative_to(tmp_path / "console").as_posix() for p in (tmp_path / "console").rglob("*")
               if p.suffix in static.TYPES}
    assert {"index.html", "app.js", "app.css", "icon.svg", "pages/review.js", "pages/snapshots.js"} <= shipped
    assert "agentkb" in bundling.c.FUNCTION_PACKAGES
