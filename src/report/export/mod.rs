//! The formats runs leave dbio in.
//! `runs.rs`: `dbio runs export` (CSV, JSON, Markdown of the runs table);
//! `fio_json.rs`: a raw run as fio's JSON (`runs show --format fio-json`).

pub mod fio_json;
pub mod runs;
