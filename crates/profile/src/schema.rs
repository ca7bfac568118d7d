//! From a profile to the shared table model: the read recipe and the inferred schema.

use autocoder_schema::{Check, ColumnSchema, DataType, ReadOptions, Scalar, TableSchema};

use crate::{Profile, SchemaOptions};

impl Profile {
    /// How pandas must read the file so that the [`Profile::schema`] holds: delimiter, header,
    /// byte-order mark and missing-value strings.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            delimiter: self.dialect.delimiter_char(),
            has_header: self.dialect.has_header,
            bom: self.dialect.bom,
            na_values: self.nulls.extra().to_vec(),
            keep_default_na: self.nulls.keep_default_na(),
            encoding: (!self.dialect.encoding.is_utf8())
                .then(|| self.dialect.encoding.python_name()),
            skip_rows: self.dialect.skip_rows,
            comment: self.dialect.comment.map(char::from),
            format: self.format,
            sheet: self.sheet.clone(),
        }
    }

    /// The table name used for schemas: the file name without directories and extensions
    /// (`data/orders.csv.gz` gives `orders`; standard input gives `stdin`).
    pub fn table_name(&self) -> String {
        if self.source == "-" {
            return "stdin".to_owned();
        }
        let file = std::path::Path::new(&self.source)
            .file_name()
            .map_or_else(|| self.source.clone(), |f| f.to_string_lossy().into_owned());
        let stem = file.split('.').next().unwrap_or(&file);
        if stem.is_empty() {
            file
        } else {
            stem.to_owned()
        }
    }

    /// The inferred schema: each column's dtype, nullable and unique flags and datetime format,
    /// with the read options; range and category checks only when `options` asks.
    pub fn schema(&self, options: &SchemaOptions) -> TableSchema {
        let mut table = TableSchema::new(self.table_name());
        table.read = self.read_options();
        for c in &self.columns {
            let mut col = ColumnSchema::new(c.name.clone(), c.dtype);
            col.nullable = c.nulls > 0 || c.dtype == DataType::Empty;
            // Pandera's `unique=True` counts repeated missing values as duplicates, so a column
            // with two or more nulls is not unique for it, however distinct its values are.
            col.unique = c.unique && c.count > 0 && c.nulls <= 1;
            col.datetime_format.clone_from(&c.datetime_format);
            col.utc = c.utc;
            col.note.clone_from(&c.note);
            if options.ranges
                && (c.dtype.is_numeric() || c.dtype.is_temporal())
                && let (Some(min), Some(max)) = (&c.min, &c.max)
                && !matches!(min, Scalar::Float(f) if !f.is_finite())
                && !matches!(max, Scalar::Float(f) if !f.is_finite())
            {
                col.checks.push(Check::InRange {
                    min: min.clone(),
                    max: max.clone(),
                    include_min: true,
                    include_max: true,
                });
            }
            let max_categories = if options.max_categories == 0 {
                20
            } else {
                options.max_categories
            };
            if options.categories
                && c.dtype == DataType::String
                && c.distinct_exact
                && c.top_values_exact
                && c.distinct > 0
                && usize::try_from(c.distinct).is_ok_and(|d| d <= max_categories)
                && c.top_values.len() as u64 == c.distinct
                && c.distinct < c.count
            {
                let mut values: Vec<Scalar> = c
                    .top_values
                    .iter()
                    .map(|v| Scalar::Str(v.value.clone()))
                    .collect();
                values.sort_by_key(ToString::to_string);
                col.checks.push(Check::Isin { values });
            }
            table.columns.push(col);
        }
        table
    }
}
