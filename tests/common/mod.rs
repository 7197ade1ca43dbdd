#![allow(dead_code)]
pub mod cli;
pub mod loopdev;
pub mod store;
