"""The fuzz targets of Tests/Fuzz are products of the package graph itself
(GATEHOUSE_FUZZ=1), not of a hand-kept copy of it in Scripts/fuzz: every
target file is one `fuzz-*` product with a seed corpus, and the ordinary
graph has none of them. Scripts/test builds and runs them all (Scripts/fuzz)."""
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "Tests" / "Fuzz"


def described(**environment):
    # The scratch folder Scripts/fuzz builds in: the same resolution, nothing written to .build.
    result = subprocess.run(["swift", "package", "--scratch-path", ".build-fuzz", "describe", "--type", "json"], cwd=ROOT,
                            env=dict(os.environ, **environment), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_every_fuzz_target_file_is_a_product_with_seeds():
    package = described(GATEHOUSE_FUZZ="1")
    targets = {target["name"]: target for target in package["targets"]}
    products = [product["name"] for product in package["products"]]
    assert products and all(name.startswith("fuzz-") for name in products), products
    sources = {}
    for product in products:
        target = targets[product]
        assert target["type"] == "executable", target
        sources[product] = [Path(target["path"], source).as_posix() for source in target["sources"]]
        seeds = FUZZ / "corpus" / product.removeprefix("fuzz-")
        assert seeds.is_dir() and any(seeds.iterdir()), f"{product} has no seeds in {seeds.relative_to(ROOT)}"
    files = sorted(path.relative_to(ROOT).as_posix() for path in (FUZZ / "Targets").glob("*.swift"))
    assert sorted(source for listed in sources.values() for source in listed) == files, sources


def test_the_ordinary_graph_has_no_fuzz_target():
    package = described(GATEHOUSE_FUZZ="")
    assert not [target["name"] for target in package["targets"] if target["name"].startswith("fuzz-")]
    assert "ssoctl" in [product["name"] for product in package["products"]]
