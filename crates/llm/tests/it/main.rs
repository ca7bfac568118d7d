//! Integration tests of autocoder-llm: every call goes over real HTTP to the scripted server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chat;
mod local_model;
mod record_replay;
mod reliability;
mod structured;
mod support;
