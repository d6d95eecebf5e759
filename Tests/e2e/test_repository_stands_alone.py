"""A clone of the repository is all a reader gets: what it needs to build and
understand the project is in the repository itself."""
import os
import re

from stack import ROOT


def test_swift_not_found_points_at_the_readme_section_that_installs_it():
    readme = open(os.path.join(ROOT, "README.md")).read()
    for script in ("run", "test"):
        text = open(os.path.join(ROOT, "Scripts", script)).read()
        message = re.search(r'die "swift not found[^\n]*section \\"([^"\\]+)\\"', text)
        assert message, f"Scripts/{script} names the README section on installing Swift"
        assert f"\n## {message.group(1)}\n" in readme, f"README has the section Scripts/{script} names"
    assert "Swift 6.3.1" in readme or "**Swift 6.3.1**" in readme
