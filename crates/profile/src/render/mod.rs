//! Human-facing renderings of a [`crate::Profile`]: [`text`] for a terminal, [`context`] for a
//! prompt.
//!
//! The terminal report rounds computed statistics to four significant digits (`mean 43.92`);
//! the prompt context prints them exactly (the shortest form that reads back to the same
//! `f64`, as in the JSON rendering). Both cut long values and escape control characters.

mod context;
pub mod format;
mod text;

pub use context::{CONTEXT_BYTES_PER_TOKEN, context, context_fitted};
pub use text::text;

#[cfg(test)]
mod tests {
    use crate::{Profile, ProfileOptions, profile_reader};

    const ORDERS: &str = "\
order_id,zip,qty,price,status,note
1,02134,3,9.99,shipped,\"fragile, handle with care\"
2,00501,NA,19.5,pending,
3,10001,7,0.1,shipped,\"two
lines\"
4,94105,,-2.25,cancelled,ok
";

    fn orders() -> Profile {
        let options = ProfileOptions {
            threads: 1,
            ..ProfileOptions::default()
        };
        profile_reader(ORDERS.as_bytes(), "orders.csv", &options, &|_, _| {}).unwrap()
    }

    #[test]
    fn text_lists_every_column_with_rounded_values() {
        let text = super::text(&orders());
        assert!(text.starts_with("orders.csv: 4 rows, 6 columns"), "{text}");
        for name in ["order_id", "zip", "qty", "price", "status", "note"] {
            assert!(text.contains(name), "{name}:\n{text}");
        }
        // std of 9.99, 19.5, 0.1, -2.25 (pandas: 9.970852521224051), to four digits.
        assert!(text.contains("9.971"), "{text}");
        assert!(!text.contains("9.970852521224051"), "{text}");
        // The prompt context keeps it exact.
        assert!(super::context(&orders()).contains("9.970852521224051"));
        assert!(
            text.contains("zip (string)"),
            "zero-padded zips stay text:\n{text}"
        );
        assert!(text.contains("qty (integer, nullable)"), "{text}");
        assert!(
            text.contains("\"two\\nlines\""),
            "line breaks are escaped:\n{text}"
        );
    }

    #[test]
    fn context_is_compact_and_complete() {
        let context = super::context(&orders());
        assert!(context.starts_with("Table `orders` (orders.csv): 4 rows, 6 columns"));
        assert!(context.contains("- qty: integer, 2 missing"), "{context}");
        assert!(
            context.contains("- zip: string, no missing, unique"),
            "{context}"
        );
        assert!(
            context.contains("values shipped (2), cancelled (1), pending (1)"),
            "{context}"
        );
        assert!(context.contains("Sample rows (3 of 4"), "{context}");
        assert!(context.len() < 2_400, "{} bytes:\n{context}", context.len());
    }
}
