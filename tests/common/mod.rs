#![allow(dead_code)]
pub mod loopdev;
