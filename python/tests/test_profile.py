"""autocoder.profile on data frames and paths, compared with what pandas computes; the live
Pandera schema; the notebook's HTML view; errors."""

from __future__ import annotations

import html
import math
from pathlib import Path

import pandas as pd
import pandera.errors
import pytest

import autocoder


def frame() -> pd.DataFrame:
    n = 500
    return pd.DataFrame(
        {
            "order_id": [f"A{i:05d}" for i in range(n)],
            "qty": [i % 7 + 1 for i in range(n)],
            "price": [None if i % 10 == 0 else round(1.25 * (i % 13) + 0.5, 2) for i in range(n)],
            "region": [["north", "south", "east", "west"][i % 4] for i in range(n)],
            "paid": [i % 3 != 0 for i in range(n)],
            "day": pd.to_datetime("2024-01-01") + pd.to_timedelta([i % 60 for i in range(n)], unit="D"),
        }
    )


def agrees_with_pandas(profile: autocoder.Profile, df: pd.DataFrame, day: str) -> None:
    document = profile.to_dict()
    assert profile.rows == document["rows"] == len(df)
    assert profile.columns == list(df.columns)
    for column in document["columns"]:
        values = df[column["name"]]
        assert column["nulls"] == int(values.isna().sum()), column["name"]
        assert column["distinct"] == values.nunique(), column["name"]
        if column.get("numeric") is not None:
            assert math.isclose(column["min"], values.min())
            assert math.isclose(column["max"], values.max())
            assert math.isclose(column["numeric"]["mean"], values.mean())
            assert math.isclose(column["numeric"]["std"], values.std())
    dtypes = {c["name"]: c["dtype"] for c in document["columns"]}
    assert dtypes == {
        "order_id": "string",
        "qty": "integer",
        "price": "float",
        "region": "string",
        "paid": "boolean",
        "day": day,
    }


def test_a_data_frame_profiles_as_pandas_sees_it() -> None:
    df = frame()
    profile = autocoder.profile(df, name="orders")
    assert profile.source == "orders"
    assert profile.to_dict()["format"] == "arrow"
    agrees_with_pandas(profile, df, "datetime")


def test_a_path_profiles_as_pandas_reads_it(tmp_path: Path) -> None:
    df = frame()
    csv = tmp_path / "orders.csv"
    df.to_csv(csv, index=False)
    parquet = tmp_path / "orders.parquet"
    df.to_parquet(parquet)
    from_csv = autocoder.profile(csv)
    assert from_csv.source == str(csv)
    # Midnight timestamps are written as dates, and read back as such.
    read = pd.read_csv(csv, parse_dates=["day"], dtype={"order_id": str})
    agrees_with_pandas(from_csv, read, "date")
    # A path-like works as well as a string, and the Parquet file profiles as the frame does.
    from_parquet = autocoder.profile(parquet).to_dict()
    from_frame = autocoder.profile(df).to_dict()
    for document in (from_parquet, from_frame):
        del document["source"], document["bytes"], document["format"]
    assert from_parquet == from_frame


def test_the_schema_is_a_live_pandera_schema() -> None:
    df = frame()
    profile = autocoder.profile(df, name="orders")
    schema = profile.schema()
    assert isinstance(schema, pandera.api.pandas.container.DataFrameSchema)
    assert list(schema.columns) == list(df.columns)
    assert "ORDERS_SCHEMA" in profile.pandera_module()
    schema.validate(df)
    bad = df.copy()
    bad.loc[3, "order_id"] = "A00004"  # order ids are unique in the profiled frame
    with pytest.raises(pandera.errors.SchemaError):
        schema.validate(bad)


def test_a_notebook_shows_the_html_report() -> None:
    profile = autocoder.profile(frame(), name="orders")
    page = profile.html()
    assert page.startswith("<!DOCTYPE html>")
    assert "order_id" in page and "<svg" in page
    shown = profile._repr_html_()
    assert shown.startswith("<iframe sandbox srcdoc=\"") and shown.endswith("</iframe>")
    srcdoc = shown.split('srcdoc="', 1)[1].split('" style=', 1)[0]
    assert "<" not in srcdoc and '"' not in srcdoc
    assert html.unescape(srcdoc) == page


def test_errors_carry_the_command_lines_messages(tmp_path: Path) -> None:
    missing = tmp_path / "missing.csv"
    with pytest.raises(autocoder.AutocoderError) as error:
        autocoder.profile(missing)
    assert str(error.value) == (
        f"cannot open {missing}: No such file or directory (os error 2); "
        "check that the file exists and is readable"
    )
    with pytest.raises(TypeError, match="expected a path"):
        autocoder.profile(42)  # type: ignore[arg-type]
