"""``python -m memdir``: the same entry point as the ``memdir`` console script."""

from memdir.cli import run

if __name__ == "__main__":
    run()
