"""One module per page of ``memdir ui``; each exposes ``routes(pages, read_only)``.

A page module only calls library functions (the same ones the CLI calls) and renders their
results; with ``read_only`` it returns no write route at all.
"""
