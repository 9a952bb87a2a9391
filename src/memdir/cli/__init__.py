"""The ``memdir`` command line: a thin layer over the library (``main(argv) -> int``)."""
