//! The model path for rules the parser does not understand: the answer type the model fills in,
//! and its validation against the table (the column exists, the check fits its type, bounds are
//! numbers, regular expressions are portable, value lists are non-empty).
