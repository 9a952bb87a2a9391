"""native: an exit stops background native batches between two batches, never inside one."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from memdir import native

PROGRAM = textwrap.dedent(
    """
    import sys, threading, time
    from memdir import native
    from memdir.errors import ShutdownError

    started = threading.Event()

    def build():
        batches = 0
        with native.region():
            try:
                while True:
                    native.check()
                    started.set()
                    time.sleep(0.05)  # one "batch" of native work
                    batches += 1
            except ShutdownError:  # inside the region: the exit waits for this line too
                print(f"stopped after {batches} batches", flush=True)

    threading.Thread(target=build, daemon=True).start()
    started.wait(10)
    """
)


def test_a_process_exit_waits_for_the_batch_in_flight_then_stops_the_loop() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("stopped after ")


def test_check_passes_while_the_process_runs() -> None:
    with native.region():
        native.check()  # raises nothing: this test process is not exiting


def test_stop_reports_a_region_that_does_not_end_in_time() -> None:
    code = (
        "import threading, time\n"
        "from memdir import native\n"
        "entered = threading.Event()\n"
        "def hold():\n"
        "    with native.region():\n"
        "        entered.set(); time.sleep(5)\n"
        "threading.Thread(target=hold, daemon=True).start(); entered.wait(5)\n"
        "print(native.stop(timeout=0.0))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.splitlines()[0] == "False"


LOADING = textwrap.dedent(
    """
    import sys, threading, time
    from memdir.errors import ShutdownError
    from memdir.recall.embed import MiniLMEmbedder

    def warm_up():
        try:
            MiniLMEmbedder().embed(["warm up the index"])
        except ShutdownError:
            pass

    threading.Thread(target=warm_up, daemon=True).start()
    time.sleep(float(sys.argv[1]))  # then exit, the model maybe half loaded
    """
)


def test_an_exit_while_a_thread_loads_the_model_does_not_abort() -> None:
    """Loading onnxruntime and the model is native work: exiting inside it aborted the process
    ("terminate called without an active exception", SIGABRT) — the exit now waits for it."""
    for delay in ("0.05", "0.1", "0.15", "0.2", "0.3"):
        proc = subprocess.run(
            [sys.executable, "-c", LOADING, delay], capture_output=True, text=True, timeout=60
        )
        assert proc.returncode == 0 and "terminate called" not in proc.stderr, (delay, proc.stderr)
