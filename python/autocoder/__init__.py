"""autocoder from Python: profile tables and generate tested scripts.

The work is done by autocoder's Rust core (the native module ``autocoder._native``); this
package re-exports it and adds :func:`generate_async`.

Example (not run as a doctest: it needs data and a model)::

    import autocoder, pandas as pd

    frame = pd.read_csv("sales.csv")
    profile = autocoder.profile(frame, name="sales")  # no CSV round trip: Arrow
    profile.to_dict()["rows"], profile.schema()        # the profile document, a Pandera schema
    profile                                            # in a notebook: the HTML report
    result = autocoder.generate(
        prompt="Total revenue (units * unit_price) per category, and overall",
        samples={"sales": frame},                      # a data frame or a path
        inputs={"min_units": int},
        outputs={"total": float, "by_category.csv": "file"},
        constraints=["units must be positive"],
        model="openai/gpt-4.1",
    )
    result.success, result.attempts, result.tokens, result.run_dir
    result.run(sales=new_frame, min_units=2)  # {"total": 1234.5, "by_category.csv": Path(...)}

Functions:

- ``profile(data, *, name=None) -> Profile``: ``data`` is a path (``str`` or ``os.PathLike``:
  CSV, Parquet, Arrow/Feather, JSON Lines, JSON, Excel) or a data frame (pandas, polars,
  ``pyarrow.Table``: anything with ``__arrow_c_stream__``), which is read in memory through the
  Arrow C stream interface. ``Profile`` has ``source``, ``rows``, ``columns``, ``to_dict()``
  (the ``autocoder profile --format json`` document), ``schema()`` (a live
  ``pandera.DataFrameSchema``), ``pandera_module()`` (its source), ``html()`` (the report page)
  and ``_repr_html_()`` (the report inside a notebook).
- ``generate(prompt, *, samples, inputs, outputs, constraints, model, **options) -> Result``:
  ``autocoder generate`` with keyword arguments. A data frame sample is written as
  ``RUN_DIR/samples/NAME.parquet``. ``sample_args`` gives a declared non-file input the value
  it takes on the samples (``{"gap": 30}``, like ``--sample-arg gap=30``). Types are names (``"int"``, ``"file"``) or Python types
  (``int``, ``float``, ``str``, ``bool``, ``datetime``, ``timedelta``, ``pathlib.Path``). The
  options mirror the command line's flags: ``api_base``, ``api_key_env``, ``temperature``,
  ``max_tokens``, ``seed``, ``request_timeout``, ``model_cache``, ``run_dir`` (default
  ``runs/NAME`` or ``runs/run-<time>``), ``name``, ``max_iterations``, ``token_budget``,
  ``skip_tests``, ``candidates``, ``sample_fixes``, ``sandbox`` (``"bwrap"``, ``"docker"``, ``"none"``), ``memory_mb``,
  ``cpu_seconds``, ``timeout``, ``network``, ``env``, ``python``, ``reuse``,
  ``code_in_fences``, ``tests_see_code``, ``trace_values``, ``units``, ``queries`` (``None``: the model profile's choice), ``no_plan``, ``base_packages``,
  ``system_prompt``, ``schema``;
  ``progress`` is called after each step with a dict (``iteration``, ``step``,
  ``elapsed_seconds``, ``tokens``, ``last_run``, ``packages``), the command line's live line.
  ``Result`` has ``success``, ``reason``, ``error``, ``solution``, ``tests``, ``plan``,
  ``attempts``, ``tokens``, ``packages``, ``run_dir``, ``to_dict()`` (``result.json``),
  ``run(**inputs)`` and ``export(dir)``.
- ``generate_async(...)``: the same, awaitable; cancelling the task stops the generation and
  cleans up its sandbox before ``CancelledError`` propagates.

Long calls release the GIL. Ctrl-C stops a call cleanly (no sandbox process, container or
temporary directory is left) and raises ``KeyboardInterrupt``. Failures raise
:class:`AutocoderError` with the message the command line prints.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from ._native import AutocoderError, Cancel, Profile, Result, generate, profile
from ._types import ArrowStreamExportable, Data, IoTypeName, OutputValue

__all__ = [
    "ArrowStreamExportable",
    "AutocoderError",
    "Data",
    "IoTypeName",
    "OutputValue",
    "Profile",
    "Result",
    "generate",
    "generate_async",
    "profile",
]


async def generate_async(prompt: str, **kwargs: Any) -> Result:
    """:func:`generate` in a worker thread, awaitable; cancelling the task cancels the run.

    Takes the same arguments as :func:`generate` (except ``cancel``). On cancellation the
    generation is told to stop, its sandbox is cleaned up, and then ``CancelledError``
    propagates.
    """
    cancel = Cancel()
    call = functools.partial(generate, prompt, cancel=cancel, **kwargs)
    running = asyncio.get_running_loop().run_in_executor(None, call)
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        cancel.set()
        try:
            await running
        except (KeyboardInterrupt, AutocoderError):
            pass
        raise
