"""`linsvm convert` once its options are parsed: check the output, convert (linsvm.io.convert),
print the summary line."""
from __future__ import annotations

import os

from ..io.atomic import check_outputs
from ..io.convert import convert as convert_data
from .console import Console
from .job import refuse_launch
from .messages import UsageLineError

__all__ = ["convert"]


def convert(input_file, output_file, to, values, instance_weights, quiet):
    """The convert command; its arguments are the command line's options."""
    refuse_launch("convert")
    text = to == "svmlight"
    if not text and os.fsdecode(output_file) == "-":
        raise UsageLineError("a binary data file cannot go to standard output (it is written "
                             "in sections, its header last): give a file name, or --to svmlight")
    if text and instance_weights is not None:
        raise UsageLineError("-W with --to svmlight: SVM-light text has no place for instance "
                             "weights (convert to a binary file to keep them)")
    if text and values != "auto":
        raise UsageLineError(f"--values {values} is for binary output, not --to svmlight")
    check_outputs([(output_file, "output file", text)], inputs=(input_file, instance_weights))
    console = Console(quiet)
    name = "stdin" if input_file == "-" else input_file
    result = convert_data(input_file, output_file, values=values,
                          instance_weights=instance_weights, to=to, note=console.note,
                          progress=lambda rows: console.progress(f"converting {name}: "
                                                                 f"{rows:,} rows"))
    console.done()
    if console.log:
        extra = "".join(f", {what}" for what, has in (("qid", result.with_qid),
                                                        ("instance weights", result.with_weights))
                        if has)
        layout = "" if text else f", values {result.layout}"
        console.log(f"converted {name}: {result.n_rows} examples, {result.n_features} features, "
                    f"{result.nnz} non-zeros{layout}{extra} -> "
                    f"{'stdout' if output_file == '-' else output_file}")
