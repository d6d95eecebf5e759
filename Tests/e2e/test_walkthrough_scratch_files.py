"""The files the walkthroughs of README.md and docs/*.md write into the
folder they run in (the checkout: cookie jars, keys, saved answers,
downloads) are ignored by git, so following a walkthrough never leaves
untracked files behind.

Two views: every output file the documents' shell blocks name (curl's
-o/-c/-D, openssl's -out/-keyout, tee, `>`), and (test_readme_walkthrough)
every file the walkthroughs really leave when they run."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# The options through which a command writes a file, per command.
OUTPUT_OPTIONS = {"curl": {"-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header"},
                  "openssl": {"-out", "-keyout"}}
# A name a walkthrough writes, after `>`/`>>` (not `>&2`) or `tee`.
REDIRECTED = re.compile(r"(?:(?<![0-9&>])>>?|\btee(?:\s+-a)?)\s*([^\s;|&)>]+)")


def shell_blocks(document):
    return re.findall(r"^ *```(?:sh|bash)\n(.*?)^ *```", document.read_text(), re.S | re.M)


def variables(block):
    """NAME=value assignments of a block (the first of each), for names built from them."""
    found = {}
    for name, value in re.findall(r"\b([A-Z][A-Z0-9_]*)=([^\s;'\"$()]+(?:\$[A-Z][A-Z0-9_]*[^\s;'\"$()]*)*)", block):
        found.setdefault(name, value)
    return found


def expanded(word, known):
    for _ in range(5):
        word = re.sub(r"\$\{?([A-Z][A-Z0-9_]*)\}?", lambda match: known.get(match.group(1), match.group(0)), word)
    return word


def written_files(block):
    """The files a shell block writes, as it names them."""
    block = block.replace("\\\n", " ")
    known = variables(block)
    files = set()
    for line in block.splitlines():
        code = re.sub(r"(^|\s)#.*", "", line)
        files |= set(REDIRECTED.findall(re.sub(r"'[^']*'|\"[^\"]*\"", "''", code)))  # not a `>` inside quotes
        for segment in re.split(r"\||;|&&|\$\(", code):
            words = segment.split()
            options = OUTPUT_OPTIONS.get(words[0], set()) if words else set()
            files |= {value for option, value in zip(words, words[1:]) if option in options}
    return {expanded(name.strip("'\""), known) for name in files}


def in_the_checkout(name):
    return not name.startswith(("/", "$", "~")) and "$" not in name


def ignored(names):
    """The names git ignores at the checkout's top (where the walkthroughs run)."""
    if not names:
        return set()
    result = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=ROOT, input="\n".join(names) + "\n",
                            capture_output=True, text=True)
    assert result.returncode in (0, 1), result.stderr
    return set(result.stdout.split())


def not_ignored(names):
    names = set(names)
    return sorted(names - ignored(names))


def test_every_file_a_walkthrough_names_as_its_output_is_ignored():
    written = {}
    for document in DOCUMENTS:
        for block in shell_blocks(document):
            for name in filter(in_the_checkout, written_files(block)):
                written.setdefault(name, document.name)
    assert {"jar", "jar1", "machine.json", "dpop-key.pem", "headers", "bench.json"} <= set(written), written
    assert any(name.startswith("swift-") and name.endswith(".tar.gz.sig") for name in written), written
    assert not not_ignored(written), {name: written[name] for name in not_ignored(written)}


def test_the_parser_sees_each_way_of_writing_a_file():
    block = ('curl -s -c jar -b jar -o /dev/null x\ncurl -D headers \\\n  -o page.html x\nopenssl genpkey -out key.pem\n'
             'echo x > out.txt 2>&1 >&2; jq "select(.a >= 5)"\nprintf y | tee -a log.txt\nNAME=swift-$V; V=6\ncurl -o $NAME.tar.gz u  # > comment\n')
    assert written_files(block) == {"jar", "/dev/null", "headers", "page.html", "key.pem", "out.txt", "log.txt",
                                    "swift-6.tar.gz"}
