//! Agent mode: instead of the pipeline's fixed steps, a model drives a tool loop over a
//! workspace (the run directory's `work/`, samples copied in) until `solution.py` and its tests
//! pass. Tools: `read_file`, `write_file`, `edit_file` (exact find/replace), `list_files`,
//! `run_tests` (the pipeline's harness: pytest in the sandbox with the contract test),
//! `run_script`, `shell`, `set_packages` and `finish`.
//!
//! Nothing the model asks for runs on the host: file tools open beneath the workspace
//! (`openat2` with `RESOLVE_BENEATH`, so `..`, absolute paths and links out are refused even
//! when the sandboxed code made the link), and every `shell` command is parsed and decided by
//! the command policy (`autocoder-policy`) and, when allowed, run as argv vectors in the
//! sandbox with the workspace writable and no network. Denials go back to the model with their
//! reason; `pytest ...` and `pip install ...` become `run_tests` and `set_packages`.
//!
//! Any model: native tool calls (OpenAI-compatible and Anthropic) or, for models whose tool
//! calls do not work (local llama.cpp models), one JSON action per turn through structured
//! output ([`ToolProtocol`]). Limits: turns, tokens, wall clock per tool call and per run; tool
//! outputs are cut and old turns dropped to fit the model's context window. Every tool call is
//! appended to `conversation.jsonl`; `result.json` is the pipeline's, plus `tool_calls` and
//! `agent_plan`, so `autocoder run` runs the result.

mod agent;
mod conversation;
mod error;
mod harness;
mod options;
mod record;
mod repeats;
mod shell;
mod tools;
mod turns;
mod workspace;

pub use agent::{SAMPLES_DIR, WORK_DIR, generate_agent, resume_agent};
pub use error::AgentError;
pub use options::{AgentOptions, ToolProtocol, default_context_tokens, is_local, output_chars_for};
pub use tools::{ActionArguments, ActionCall, AgentAction, ToolName};
pub use workspace::{FileError, Workspace};
