//! The agent's tools: their names, argument schemas and descriptions (from
//! `templates/agent/tools/<name>.j2`), the typed call a model's arguments parse into, and the
//! action object of the JSON protocol.

use autocoder_llm::ToolSpec;
use autocoder_prompts::Prompts;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::AgentError;

/// A tool's name.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    /// Read a workspace file.
    ReadFile,
    /// Write a workspace file.
    WriteFile,
    /// Exact find/replace in a workspace file.
    EditFile,
    /// List workspace files.
    ListFiles,
    /// The harness's pytest run.
    RunTests,
    /// The script on the samples.
    RunScript,
    /// One command through the policy and the sandbox.
    Shell,
    /// The environment's packages.
    SetPackages,
    /// The end.
    Finish,
}

impl ToolName {
    /// Every tool, in the order they are offered.
    pub const ALL: [ToolName; 9] = [
        Self::ReadFile,
        Self::WriteFile,
        Self::EditFile,
        Self::ListFiles,
        Self::RunTests,
        Self::RunScript,
        Self::Shell,
        Self::SetPackages,
        Self::Finish,
    ];

    /// The name the model uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadFile => "read_file",
            Self::WriteFile => "write_file",
            Self::EditFile => "edit_file",
            Self::ListFiles => "list_files",
            Self::RunTests => "run_tests",
            Self::RunScript => "run_script",
            Self::Shell => "shell",
            Self::SetPackages => "set_packages",
            Self::Finish => "finish",
        }
    }

    /// The tool of this name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The arguments: (name, JSON Schema, required), in the order a model should write them.
    /// Schemas go out with their keys sorted (`serde_json`'s maps), and a grammar-constrained
    /// server makes the model write the keys in that order, so the names sort in writing
    /// order: the file first, then what goes in it (with `content` before `path`, the local
    /// model wrote output values before choosing a file, and never wrote `solution.py`).
    fn arguments(self) -> Vec<(&'static str, Value, bool)> {
        let string = json!({"type": "string"});
        let strings = json!({"type": "array", "items": {"type": "string"}});
        match self {
            Self::ReadFile => vec![("path", string, true)],
            Self::WriteFile => vec![("path", string.clone(), true), ("text", string, true)],
            Self::EditFile => vec![
                ("path", string.clone(), true),
                ("replace", string.clone(), true),
                ("with", string, true),
            ],
            Self::ListFiles => vec![("path", string, false)],
            Self::RunTests | Self::RunScript => vec![("args", strings, false)],
            Self::Shell => vec![("command", string, true)],
            Self::SetPackages => vec![
                ("packages", strings.clone(), true),
                ("system_packages", strings, false),
            ],
            Self::Finish => vec![("summary", string, true)],
        }
    }

    /// The argument names, for the JSON protocol's tool list.
    pub fn argument_names(self) -> Vec<&'static str> {
        self.arguments().into_iter().map(|(n, _, _)| n).collect()
    }
}

/// The tools as the API offers them (native protocol).
pub(crate) fn specs(prompts: &Prompts) -> Result<Vec<ToolSpec>, AgentError> {
    ToolName::ALL
        .into_iter()
        .map(|tool| {
            let mut properties = serde_json::Map::new();
            let mut required = Vec::new();
            for (name, schema, needed) in tool.arguments() {
                properties.insert(name.to_owned(), schema);
                if needed {
                    required.push(name);
                }
            }
            Ok(ToolSpec {
                name: tool.name().to_owned(),
                description: description(prompts, tool)?,
                parameters: json!({
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                }),
            })
        })
        .collect()
}

/// A tool's description, from its template.
pub(crate) fn description(prompts: &Prompts, tool: ToolName) -> Result<String, AgentError> {
    Ok(prompts
        .render(&format!("agent/tools/{}.j2", tool.name()), json!({}))?
        .trim()
        .to_owned())
}

/// A call with its arguments checked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    tag = "tool",
    content = "arguments",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub(crate) enum Call {
    /// `read_file`.
    ReadFile {
        /// Workspace-relative path.
        path: String,
    },
    /// `write_file`.
    WriteFile {
        /// Workspace-relative path.
        path: String,
        /// The whole file.
        text: String,
    },
    /// `edit_file`: replace `old` with `new` (`{"path", "replace", "with"}`).
    EditFile {
        /// Workspace-relative path.
        path: String,
        /// The exact text to find (once).
        #[serde(rename = "replace")]
        old: String,
        /// Its replacement.
        #[serde(rename = "with")]
        new: String,
    },
    /// `list_files`.
    ListFiles {
        /// The directory (default: the workspace).
        #[serde(default)]
        path: Option<String>,
    },
    /// `run_tests`.
    RunTests {
        /// pytest arguments.
        #[serde(default)]
        args: Option<Vec<String>>,
    },
    /// `run_script`.
    RunScript {
        /// Extra `--name value` arguments.
        #[serde(default)]
        args: Option<Vec<String>>,
    },
    /// `shell`.
    Shell {
        /// The command.
        command: String,
    },
    /// `set_packages`.
    SetPackages {
        /// pip requirements.
        packages: Vec<String>,
        /// Debian packages.
        #[serde(default)]
        system_packages: Option<Vec<String>>,
    },
    /// `finish`.
    Finish {
        /// What the script does.
        #[serde(default)]
        summary: Option<String>,
    },
}

impl Call {
    /// Parses a call of `name` with `arguments` (nulls count as absent); the error is for the model.
    pub(crate) fn parse(name: &str, arguments: &Value) -> Result<Self, String> {
        let tool = ToolName::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = ToolName::ALL.iter().map(|t| t.name()).collect();
            format!(
                "there is no tool `{name}`; the tools are {}",
                names.join(", ")
            )
        })?;
        let arguments = match arguments {
            Value::Object(map) => Value::Object(
                map.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            Value::Null => json!({}),
            Value::String(text) => serde_json::from_str(text)
                .map_err(|e| format!("the arguments of `{name}` are not a JSON object: {e}"))?,
            other => {
                return Err(format!(
                    "the arguments of `{name}` must be an object, not {other}"
                ));
            }
        };
        serde_json::from_value(json!({"tool": name, "arguments": arguments})).map_err(|e| {
            format!(
                "bad arguments for `{name}` ({e}); it takes: {}",
                tool.argument_names().join(", ")
            )
        })
    }

    /// The tool called.
    pub(crate) fn tool(&self) -> ToolName {
        match self {
            Self::ReadFile { .. } => ToolName::ReadFile,
            Self::WriteFile { .. } => ToolName::WriteFile,
            Self::EditFile { .. } => ToolName::EditFile,
            Self::ListFiles { .. } => ToolName::ListFiles,
            Self::RunTests { .. } => ToolName::RunTests,
            Self::RunScript { .. } => ToolName::RunScript,
            Self::Shell { .. } => ToolName::Shell,
            Self::SetPackages { .. } => ToolName::SetPackages,
            Self::Finish { .. } => ToolName::Finish,
        }
    }
}

/// One turn of the JSON protocol: the action object the model answers with,
/// `{"thought": ..., "tool_call": {"name": ..., "parameters": {...}}}`. Its schema ties each
/// tool to exactly its own arguments (see [`AgentAction::json_schema`]), so a
/// grammar-constrained server cannot produce a tool with another tool's arguments.
///
/// The keys are chosen so that their alphabetical order is the order the model should write
/// them in (reasoning, then the tool, then its arguments): schemas go out with sorted keys, and a
/// grammar-constrained server generates the properties in the schema's order.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AgentAction {
    /// A sentence or two of reasoning (the first one states the plan).
    pub thought: Option<String>,
    /// The tool and its arguments.
    #[serde(rename = "tool_call")]
    pub call: ActionCall,
}

/// The call in an [`AgentAction`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ActionCall {
    /// The tool to call.
    #[serde(rename = "name")]
    pub tool: ToolName,
    /// Its arguments (optional ones the model left out or set to null stay `None`).
    #[serde(rename = "parameters")]
    pub arguments: ActionArguments,
}

impl JsonSchema for AgentAction {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AgentAction".into()
    }

    /// An object with `thought` and `tool_call`, where `tool_call` is one of the tools, each with exactly
    /// its own arguments (the same list the native protocol offers); optional arguments are
    /// nullable. The root stays an object: OpenAI's strict mode and Anthropic's tool input
    /// schemas need one.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let calls: Vec<Value> = ToolName::ALL
            .into_iter()
            .map(|tool| {
                let mut properties = serde_json::Map::new();
                for (name, schema, needed) in tool.arguments() {
                    let schema = if needed {
                        schema
                    } else {
                        json!({"anyOf": [schema, {"type": "null"}]})
                    };
                    properties.insert(name.to_owned(), schema);
                }
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "enum": [tool.name()]},
                        "parameters": {"type": "object", "properties": properties},
                    },
                })
            })
            .collect();
        let schema = json!({
            "type": "object",
            "properties": {
                "thought": {
                    "description": "A sentence or two of reasoning (the first one states the plan).",
                    "type": ["string", "null"],
                },
                "tool_call": {"anyOf": calls},
            },
        });
        schemars::Schema::try_from(schema).unwrap_or_default()
    }
}

/// Every argument any tool takes, each optional: what a call's arguments parse into before
/// the call is checked against the tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ActionArguments {
    /// `read_file`, `write_file`, `edit_file`, `list_files`.
    pub path: Option<String>,
    /// `write_file`: the whole file.
    pub text: Option<String>,
    /// `edit_file`: the text to replace.
    pub replace: Option<String>,
    /// `edit_file`: what replaces it.
    #[serde(rename = "with")]
    pub with_text: Option<String>,
    /// `shell`.
    pub command: Option<String>,
    /// `run_tests`, `run_script`.
    pub args: Option<Vec<String>>,
    /// `set_packages`.
    pub packages: Option<Vec<String>>,
    /// `set_packages`.
    pub system_packages: Option<Vec<String>>,
    /// `finish`.
    pub summary: Option<String>,
}

impl AgentAction {
    /// The arguments as a JSON object without the nulls, for parsing the call and for the records.
    pub fn arguments_value(&self) -> Value {
        match serde_json::to_value(&self.call.arguments) {
            Ok(Value::Object(map)) => {
                Value::Object(map.into_iter().filter(|(_, v)| !v.is_null()).collect())
            }
            _ => json!({}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_parse_with_nulls_and_name_their_mistakes() {
        let call = Call::parse("read_file", &json!({"path": "a.py", "text": null})).unwrap();
        assert_eq!(
            call,
            Call::ReadFile {
                path: "a.py".into()
            }
        );
        let err = Call::parse("read_file", &json!({})).unwrap_err();
        assert!(err.contains("missing field `path`"), "{err}");
        let err = Call::parse("bash", &json!({})).unwrap_err();
        assert!(err.contains("no tool `bash`"), "{err}");
        let call = Call::parse("shell", &json!("{\"command\": \"ls\"}")).unwrap();
        assert_eq!(
            call,
            Call::Shell {
                command: "ls".into()
            }
        );
    }

    /// The JSON protocol's schema, as sent (strict): each tool is tied to exactly its own
    /// arguments, so no answer the grammar allows mixes two tools' arguments; the root is an
    /// object (OpenAI strict mode, Anthropic tool input).
    /// A grammar-constrained model writes the keys in the schema's (sorted) order, so each
    /// tool's arguments sort in the order they should be written: the file before its text.
    #[test]
    fn each_tools_arguments_sort_in_writing_order() {
        for tool in ToolName::ALL {
            let names = tool.argument_names();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(names, sorted, "{}", tool.name());
        }
        assert_eq!(ToolName::WriteFile.argument_names(), ["path", "text"]);
        assert_eq!(
            ToolName::EditFile.argument_names(),
            ["path", "replace", "with"]
        );
    }

    #[test]
    fn the_action_schema_ties_each_tool_to_its_own_arguments() {
        let (_, schema) = autocoder_llm::strict_schema_for::<AgentAction>();
        assert_eq!(schema["type"], "object");
        // Sorted, as sent: the reasoning comes first, then the tool, then its arguments.
        assert_eq!(schema["required"], json!(["thought", "tool_call"]));
        let calls = schema["properties"]["tool_call"]["anyOf"]
            .as_array()
            .unwrap();
        assert_eq!(calls.len(), ToolName::ALL.len());
        for (tool, call) in ToolName::ALL.into_iter().zip(calls) {
            assert_eq!(call["required"], json!(["name", "parameters"]));
            assert_eq!(call["properties"]["name"]["enum"], json!([tool.name()]));
            assert_eq!(call["additionalProperties"], false);
            let arguments = &call["properties"]["parameters"];
            assert_eq!(arguments["additionalProperties"], false, "{tool:?}");
            let mut names = tool.argument_names();
            names.sort_unstable();
            assert_eq!(arguments["required"], json!(names), "{tool:?}");
        }
        let list = &calls[3]["properties"]["parameters"]["properties"]["path"];
        assert_eq!(
            list["anyOf"][1]["type"], "null",
            "optional arguments are nullable"
        );
        // What the model answers parses, and what the tool does not take is left out.
        let action: AgentAction = serde_json::from_value(json!({
            "thought": "look",
            "tool_call": {"name": "list_files", "parameters": {"path": null}}
        }))
        .unwrap();
        assert_eq!(action.call.tool, ToolName::ListFiles);
        assert_eq!(action.arguments_value(), json!({}));
    }

    #[test]
    fn every_tool_has_a_description() {
        let prompts = Prompts::embedded().unwrap();
        let specs = specs(&prompts).unwrap();
        assert_eq!(specs.len(), ToolName::ALL.len());
        assert!(specs.iter().all(|s| !s.description.is_empty()));
    }
}
