"""The names of the model file formats (pure Python: the command line's choices)."""

# What Model.save(format=...) and --model-format accept: the linsvm format (text
# weights up to format_linsvm.BINARY_MIN_ENTRIES weights, binary ones above), with
# text or binary weights forced, and LIBLINEAR's.
MODEL_FORMATS = ("linsvm", "linsvm-text", "linsvm-binary", "liblinear")
