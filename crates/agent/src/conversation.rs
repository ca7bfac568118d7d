//! The conversation the model sees, kept inside its context window: the system prompt, the task
//! (with a one-line note per turn dropped to make room), then the turns, each an assistant
//! message with the tool results that answer it. Tool outputs are cut to a bound before they
//! get here; whole turns are dropped oldest first, so a tool call never loses its result.

use autocoder_llm::Message;

/// One turn: what the model said and what its tools answered.
#[derive(Debug, Clone)]
pub(crate) struct Turn {
    /// The assistant message (text, or tool calls).
    pub(crate) assistant: Message,
    /// The answers: tool results (native) or one user message (JSON protocol).
    pub(crate) results: Vec<Message>,
    /// What the turn did, in one line, for when it is dropped.
    pub(crate) line: String,
}

/// The whole conversation.
#[derive(Debug, Clone)]
pub(crate) struct Conversation {
    system: String,
    task: String,
    dropped: Vec<String>,
    turns: Vec<Turn>,
}

impl Conversation {
    /// A conversation that starts with `system` and `task`.
    pub(crate) fn new(system: String, task: String) -> Self {
        Self {
            system,
            task,
            dropped: Vec::new(),
            turns: Vec::new(),
        }
    }

    /// Adds a turn.
    pub(crate) fn push(&mut self, turn: Turn) {
        self.turns.push(turn);
    }

    /// Lines of the turns dropped so far.
    pub(crate) fn dropped(&self) -> &[String] {
        &self.dropped
    }

    /// The messages to send; `note` (the dropped turns' summary, when any) follows the task.
    pub(crate) fn messages(&self, note: Option<&str>) -> Vec<Message> {
        let mut task = self.task.clone();
        if let Some(note) = note {
            task.push_str("\n\n");
            task.push_str(note);
        }
        let mut messages = vec![Message::system(self.system.clone()), Message::user(task)];
        for turn in &self.turns {
            messages.push(turn.assistant.clone());
            messages.extend(turn.results.iter().cloned());
        }
        messages
    }

    /// Drops the oldest turns (keeping the last one) until the estimate of the messages, with
    /// the note the dropped turns leave (`note_overhead` tokens plus their lines), fits `budget`
    /// tokens; returns how many were dropped.
    pub(crate) fn fit(&mut self, budget: usize, note_overhead: usize) -> usize {
        let note = |dropped: &[String]| {
            if dropped.is_empty() {
                0
            } else {
                note_overhead + dropped.iter().map(|l| l.len() / 3 + 2).sum::<usize>()
            }
        };
        let mut count = 0;
        while self.turns.len() > 1
            && estimate_tokens(&self.messages(None)) + note(&self.dropped) > budget
        {
            let turn = self.turns.remove(0);
            self.dropped.push(turn.line);
            count += 1;
        }
        count
    }
}

/// A rough token count: about three characters a token (code and JSON run denser than prose),
/// plus a few per message.
pub(crate) fn estimate_tokens(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            let calls: usize = m
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.to_string().len())
                .sum();
            (m.content.len() + calls) / 3 + 8
        })
        .sum()
}

/// `text` cut to about `max` characters: its head and tail with a marker between.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max * 2 / 3).collect();
    let tail: String = text.chars().skip(count - max / 3).collect();
    format!(
        "{head}\n[... {} characters cut ...]\n{tail}",
        count - head.chars().count() - tail.chars().count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_keep_head_and_tail() {
        let text: String = (0..1000u32)
            .map(|i| char::from(b'a' + u8::try_from(i % 26).unwrap()))
            .collect();
        let short = cut(&text, 90);
        assert!(short.starts_with(&text[..60]), "{short}");
        assert!(short.ends_with(&text[970..]), "{short}");
        assert!(short.contains("characters cut"));
        assert_eq!(cut("short", 90), "short");
    }

    #[test]
    fn old_turns_are_dropped_to_fit() {
        let mut c = Conversation::new("s".into(), "t".into());
        for i in 0..10 {
            c.push(Turn {
                assistant: Message::assistant("x".repeat(300)),
                results: vec![Message::user("y".repeat(300))],
                line: format!("turn {i}"),
            });
        }
        let before = estimate_tokens(&c.messages(None));
        assert!(before > 1000);
        let dropped = c.fit(700, 20);
        let note: usize = 20 + c.dropped().iter().map(|l| l.len() / 3 + 2).sum::<usize>();
        assert!(dropped > 0);
        assert!(estimate_tokens(&c.messages(None)) + note <= 700);
        assert_eq!(c.dropped()[0], "turn 0");
        // The newest turn stays, whatever its size.
        c.fit(1, 0);
        assert_eq!(c.messages(None).len(), 4);
    }
}
