//! The integration suite, one test binary: each module below is one area of the
//! contract (what used to be one test crate each), run against the real router, the
//! real binary or both. `common` is the harness every module shares (fresh databases,
//! tokens, request builders, the Lambda Runtime API, moto and PostgreSQL stand-ins);
//! `billings` holds the scenarios that run for payables and receivables alike, `records`
//! those every plain resource shares, each one test sweeping a table of the resources.
//! One binary links once, so an edit of the library costs one link, not thirty.

mod common;
#[macro_use]
mod billings;

mod accounts;
mod approval_gate;
mod attachments;
mod auth_and_access;
mod automatic_rules;
mod banks;
mod blob_store;
mod cash_flow;
mod categories;
mod charges;
mod companies;
mod concurrency;
mod confirmations;
mod cost_centers;
mod database_secret;
mod demo_data;
mod deploy;
mod dispatch;
mod error_messages;
mod event_fixtures;
mod faults;
mod fuzz_corpus;
mod headers;
mod home;
mod housekeeping;
mod lambda_events;
mod load;
mod local_server;
mod logs;
mod oauth;
mod oidc;
mod payables;
mod people;
mod projection;
mod protocol_matrix;
mod real_api;
mod receivables;
mod reconciliations;
mod records;
mod references;
mod reports;
mod resources_prompts;
mod riding_count;
mod secrets_manager;
mod security;
mod shared_budget;
mod statement_imports;
mod taxes;
mod template;
mod tools_catalogue;
mod tools_companies;
mod tools_list_queries;
mod transactions;
mod transfers;
