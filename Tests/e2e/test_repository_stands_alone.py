"""A clone of the repository is all a reader gets: no tracked file may point
at notes that live outside it (the team's contract and design notes beside
the checkout). What a reader needs is in docs/ARCHITECTURE.md and the other docs."""
import os
import re
import subprocess

from stack import ROOT

# Spelled in pieces so that this file does not match itself.
# The design notes beside the checkout carry the name spelled last below, so
# the project's own are ARCHITECTURE.md: any mention of that name means the
# outside notes.
OUTSIDE_REFERENCES = [b"../" + b"shared", b"CONTRACT" + b".md", b"shared/" + b"DESIGN", b"DESIGN" + b".md"]


def tracked_files():
    listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name.decode() for name in listing.split(b"\0") if name]


def test_no_tracked_file_points_outside_the_repository():
    offenders = []
    for name in tracked_files():
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):  # deleted in the working tree
            continue
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, 1):
                for reference in OUTSIDE_REFERENCES:
                    if reference in line:
                        offenders.append(f"{name}:{number}: {reference.decode()}")
    assert not offenders, "files that point outside the repository:\n" + "\n".join(offenders)


def test_the_design_notes_the_docs_point_at_are_in_the_repository():
    assert os.path.isfile(os.path.join(ROOT, "docs", "ARCHITECTURE.md"))
    readme = open(os.path.join(ROOT, "README.md")).read()
    assert "(docs/ARCHITECTURE.md)" in readme, "README links to docs/ARCHITECTURE.md"


def test_swift_not_found_points_at_the_readme_section_that_installs_it():
    readme = open(os.path.join(ROOT, "README.md")).read()
    for script in ("run", "test"):
        text = open(os.path.join(ROOT, "Scripts", script)).read()
        message = re.search(r'die "swift not found[^\n]*section \\"([^"\\]+)\\"', text)
        assert message, f"Scripts/{script} names the README section on installing Swift"
        assert f"\n## {message.group(1)}\n" in readme, f"README has the section Scripts/{script} names"
    assert "Swift 6.3.1" in readme or "**Swift 6.3.1**" in readme


def heading_anchors(path):
    """The anchors GitHub gives a Markdown file's headings (code blocks skipped)."""
    anchors, in_code = set(), False
    for line in open(path):
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"#+ (.*)", line)
        if heading:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1)).strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return anchors


def test_links_between_the_docs_resolve_inside_the_repository():
    broken = []
    documents = ["README.md"] + sorted("docs/" + name for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
    for document in documents:
        text = open(os.path.join(ROOT, document)).read()
        for link in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z][a-z0-9+.-]*:", link):  # https:, mailto: ...
                continue
            target, _, anchor = link.partition("#")
            path = os.path.normpath(os.path.join(ROOT, os.path.dirname(document), target)) if target else os.path.join(ROOT, document)
            if not path.startswith(ROOT + os.sep) or not os.path.exists(path):
                broken.append(f"{document}: {link} (no such file in the repository)")
            elif anchor and path.endswith(".md") and anchor not in heading_anchors(path):
                broken.append(f"{document}: {link} (no such heading)")
    assert not broken, "\n".join(broken)
