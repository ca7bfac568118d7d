//! Arrow record batches (from Parquet and Arrow IPC files) as text columns: which columns a
//! schema gives (struct leaves as `parent.child`, list and map columns by their length), and each
//! value written the way pandas writes it to CSV (`True`, `2024-01-31`, `2024-01-31 12:00:00+00:00`),
//! so the CSV profiler's classification gives the column's type.

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Decimal128Type, Decimal256Type, DurationMicrosecondType,
    DurationMillisecondType, DurationNanosecondType, DurationSecondType, Float16Type, Float32Type,
    Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Fields, Schema, TimeUnit};

use super::arrow_values::{
    date, decimal, float_text, floats, hex, strings, time_of_day, timestamp,
};
use super::text::TextColumn;

/// One profiled column of a typed file.
#[derive(Debug, Clone)]
pub(crate) struct Leaf {
    /// `parent.child` for struct leaves.
    pub(crate) name: String,
    /// Child indices from the batch's column down to the leaf.
    path: Vec<usize>,
    /// Profiled by its length (lists, maps).
    length: bool,
    /// The type the file declares.
    pub(crate) source_type: String,
    /// What the profile (and the Pandera schema) cannot express about it.
    pub(crate) note: Option<String>,
    /// Values are text whatever they look like.
    pub(crate) text: bool,
}

/// The profiled columns of `schema`, in order.
pub(crate) fn leaves(schema: &Schema) -> Vec<Leaf> {
    let mut out = Vec::new();
    walk(schema.fields(), "", &mut Vec::new(), &mut out);
    out
}

fn walk(fields: &Fields, prefix: &str, path: &mut Vec<usize>, out: &mut Vec<Leaf>) {
    for (i, field) in fields.iter().enumerate() {
        let name = format!("{prefix}{}", field.name());
        path.push(i);
        let data_type = field.data_type();
        match data_type {
            DataType::Struct(children) => {
                walk(children, &format!("{name}."), path, out);
            }
            DataType::List(element)
            | DataType::LargeList(element)
            | DataType::FixedSizeList(element, _) => out.push(Leaf {
                name,
                path: path.clone(),
                length: true,
                source_type: data_type.to_string(),
                note: Some(format!(
                    "a list of {}, profiled by its length",
                    element.data_type()
                )),
                text: false,
            }),
            DataType::Map(..) => out.push(Leaf {
                name,
                path: path.clone(),
                length: true,
                source_type: data_type.to_string(),
                note: Some("a map, profiled by its number of entries".to_owned()),
                text: false,
            }),
            other => {
                let supported = supported(other);
                out.push(Leaf {
                    name,
                    path: path.clone(),
                    length: false,
                    source_type: other.to_string(),
                    note: (!supported).then(|| format!("type {other} is not profiled")),
                    text: !supported || is_text(other),
                });
            }
        }
        path.pop();
    }
}

fn is_text(t: &DataType) -> bool {
    match t {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => true,
        DataType::Dictionary(_, value) => is_text(value),
        _ => false,
    }
}

fn supported(t: &DataType) -> bool {
    match t {
        DataType::Null
        | DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Date32
        | DataType::Date64
        | DataType::Timestamp(..)
        | DataType::Time32(_)
        | DataType::Time64(_)
        | DataType::Duration(_)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => true,
        DataType::Dictionary(_, value) => supported(value) || is_text(value),
        other => is_text(other),
    }
}

/// The leaf's cells in `batch`: missing where the leaf or any struct above it is null.
pub(crate) fn render(batch: &RecordBatch, leaf: &Leaf) -> TextColumn {
    let rows = batch.num_rows();
    let mut out = TextColumn::with_capacity(rows);
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(leaf.path.len());
    let mut current: Option<ArrayRef> = None;
    for &i in &leaf.path {
        let next = match &current {
            None => batch.columns().get(i).cloned(),
            Some(parent) => parent
                .as_struct_opt()
                .and_then(|s| s.columns().get(i).cloned()),
        };
        let Some(next) = next else {
            (0..rows).for_each(|_| out.push_null());
            return out;
        };
        arrays.push(next.clone());
        current = Some(next);
    }
    let Some(array) = current else {
        (0..rows).for_each(|_| out.push_null());
        return out;
    };
    let parents = &arrays[..arrays.len() - 1];
    let parents_null = |r: usize| parents.iter().any(|p| p.is_null(r));
    if leaf.length {
        lengths(array.as_ref(), &parents_null, &mut out);
    } else if leaf.note.is_some() {
        (0..rows).for_each(|_| out.push_null());
    } else {
        values(array.as_ref(), &parents_null, &mut out);
    }
    out
}

fn lengths(array: &dyn Array, parents_null: &dyn Fn(usize) -> bool, out: &mut TextColumn) {
    let mut buf = itoa::Buffer::new();
    for r in 0..array.len() {
        if parents_null(r) || array.is_null(r) {
            out.push_null();
            continue;
        }
        let n: i64 = match array.data_type() {
            DataType::List(_) => array.as_list::<i32>().value_length(r).into(),
            DataType::LargeList(_) => array.as_list::<i64>().value_length(r),
            DataType::FixedSizeList(..) => array.as_fixed_size_list().value_length().into(),
            DataType::Map(..) => {
                let offsets = array.as_map().value_offsets();
                (offsets[r + 1] - offsets[r]).into()
            }
            _ => 0,
        };
        out.push(buf.format(n));
    }
}

/// Writes every value of `array` (a leaf of a supported type) to `out`.
#[allow(clippy::too_many_lines)] // one arm per Arrow type
fn values(array: &dyn Array, parents_null: &dyn Fn(usize) -> bool, out: &mut TextColumn) {
    let n = array.len();
    let each = |out: &mut TextColumn, write: &dyn Fn(usize, &mut String) -> bool| {
        for r in 0..n {
            if parents_null(r) || array.is_null(r) {
                out.push_null();
                continue;
            }
            let mut missing = false;
            out.push_with(|s| missing = !write(r, s));
            if missing {
                out.undo_to_null();
            }
        }
    };
    macro_rules! ints {
        ($t:ty) => {{
            let a = array.as_primitive::<$t>();
            let mut buf = itoa::Buffer::new();
            for r in 0..n {
                if parents_null(r) || a.is_null(r) {
                    out.push_null();
                } else {
                    out.push(buf.format(a.value(r)));
                }
            }
        }};
    }
    match array.data_type() {
        DataType::Null => (0..n).for_each(|_| out.push_null()),
        DataType::Boolean => {
            let a = array.as_boolean();
            for r in 0..n {
                if parents_null(r) || a.is_null(r) {
                    out.push_null();
                } else {
                    out.push(if a.value(r) { "True" } else { "False" });
                }
            }
        }
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Duration(TimeUnit::Second) => ints!(DurationSecondType),
        DataType::Duration(TimeUnit::Millisecond) => ints!(DurationMillisecondType),
        DataType::Duration(TimeUnit::Microsecond) => ints!(DurationMicrosecondType),
        DataType::Duration(TimeUnit::Nanosecond) => ints!(DurationNanosecondType),
        DataType::Float16 => {
            let a = array.as_primitive::<Float16Type>();
            floats(
                n,
                |r| (!(parents_null(r) || a.is_null(r))).then(|| a.value(r).to_f64()),
                out,
            );
        }
        DataType::Float32 => {
            let a = array.as_primitive::<Float32Type>();
            let mut buf = ryu::Buffer::new();
            for r in 0..n {
                let v = a.value(r);
                if parents_null(r) || a.is_null(r) || v.is_nan() {
                    out.push_null();
                } else {
                    out.push(float_text(&mut buf, v));
                }
            }
        }
        DataType::Float64 => {
            let a = array.as_primitive::<Float64Type>();
            floats(
                n,
                |r| (!(parents_null(r) || a.is_null(r))).then(|| a.value(r)),
                out,
            );
        }
        DataType::Utf8 => {
            let a = array.as_string::<i32>();
            strings(
                n,
                |r| (!(parents_null(r) || a.is_null(r))).then(|| a.value(r)),
                out,
            );
        }
        DataType::LargeUtf8 => {
            let a = array.as_string::<i64>();
            strings(
                n,
                |r| (!(parents_null(r) || a.is_null(r))).then(|| a.value(r)),
                out,
            );
        }
        DataType::Utf8View => {
            let a = array.as_string_view();
            strings(
                n,
                |r| (!(parents_null(r) || a.is_null(r))).then(|| a.value(r)),
                out,
            );
        }
        DataType::Binary => {
            let a = array.as_binary::<i32>();
            each(out, &|r, s| hex(a.value(r), s));
        }
        DataType::LargeBinary => {
            let a = array.as_binary::<i64>();
            each(out, &|r, s| hex(a.value(r), s));
        }
        DataType::BinaryView => {
            let a = array.as_binary_view();
            each(out, &|r, s| hex(a.value(r), s));
        }
        DataType::FixedSizeBinary(_) => {
            let a = array.as_fixed_size_binary();
            each(out, &|r, s| hex(a.value(r), s));
        }
        DataType::Date32 => {
            let a = array.as_primitive::<Date32Type>();
            each(out, &|r, s| date(i64::from(a.value(r)) * 86_400, 0, s));
        }
        DataType::Date64 => {
            let a = array.as_primitive::<Date64Type>();
            each(out, &|r, s| {
                let ms = a.value(r);
                date(ms.div_euclid(1000), 0, s)
            });
        }
        DataType::Timestamp(unit, tz) => {
            let utc = tz.is_some();
            let per_second: i64 = match unit {
                TimeUnit::Second => 1,
                TimeUnit::Millisecond => 1_000,
                TimeUnit::Microsecond => 1_000_000,
                TimeUnit::Nanosecond => 1_000_000_000,
            };
            let raw = |r: usize| -> i64 {
                match unit {
                    TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(r),
                    TimeUnit::Millisecond => {
                        array.as_primitive::<TimestampMillisecondType>().value(r)
                    }
                    TimeUnit::Microsecond => {
                        array.as_primitive::<TimestampMicrosecondType>().value(r)
                    }
                    TimeUnit::Nanosecond => {
                        array.as_primitive::<TimestampNanosecondType>().value(r)
                    }
                }
            };
            each(out, &|r, s| timestamp(raw(r), per_second, utc, s));
        }
        DataType::Time32(unit) => {
            each(out, &|r, s| {
                let (secs, nanos) = match unit {
                    TimeUnit::Millisecond => {
                        let v = i64::from(array.as_primitive::<Time32MillisecondType>().value(r));
                        (v / 1000, (v % 1000) * 1_000_000)
                    }
                    _ => (
                        i64::from(array.as_primitive::<Time32SecondType>().value(r)),
                        0,
                    ),
                };
                time_of_day(secs, nanos, s)
            });
        }
        DataType::Time64(unit) => {
            each(out, &|r, s| {
                let (secs, nanos) = if *unit == TimeUnit::Nanosecond {
                    let v = array.as_primitive::<Time64NanosecondType>().value(r);
                    (v / 1_000_000_000, v % 1_000_000_000)
                } else {
                    let v = array.as_primitive::<Time64MicrosecondType>().value(r);
                    (v / 1_000_000, (v % 1_000_000) * 1000)
                };
                time_of_day(secs, nanos, s)
            });
        }
        DataType::Decimal128(_, scale) => {
            let a = array.as_primitive::<Decimal128Type>();
            each(out, &|r, s| {
                decimal(&a.value(r).to_string(), *scale, s);
                true
            });
        }
        DataType::Decimal256(_, scale) => {
            let a = array.as_primitive::<Decimal256Type>();
            each(out, &|r, s| {
                decimal(&a.value(r).to_string(), *scale, s);
                true
            });
        }
        DataType::Dictionary(..) => {
            let dict = array.as_any_dictionary();
            let mut dictionary_text = TextColumn::with_capacity(dict.values().len());
            values(dict.values().as_ref(), &|_| false, &mut dictionary_text);
            let keys = dict.normalized_keys();
            for (r, &k) in keys.iter().enumerate() {
                match dictionary_text.get(k) {
                    Some(v) if !(parents_null(r) || array.is_null(r)) => out.push(v),
                    _ => out.push_null(),
                }
            }
        }
        _ => (0..n).for_each(|_| out.push_null()),
    }
}
