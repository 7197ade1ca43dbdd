#![allow(dead_code)]
pub mod loopdev;
pub mod store;
