"""Writes a generated block into a Markdown file between its markers.

Used by the bench scripts that update docs/PERFORMANCE.md with DOC=1
(jax_programs.sh, onnx_vs_ort.sh).
"""


def write_section(path, name, body, heading):
    """Puts `body` between `<!-- name:begin -->` and `<!-- name:end -->` in
    `path`, in place of what was there; without the markers, appends it in
    a new section `## heading`."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = open(path).read()
    block = f"{begin}\n{body}\n{end}"
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text += f"\n## {heading}\n\n" + block + "\n"
    open(path, "w").write(text)
